"""The agreement report as one self-contained HTML file.

Tables and inline SVG plots only: no script, no stylesheet or font from the network,
so the file opens the same on an air-gapped machine. Every string from the data is
escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1100px; color: #1d2330; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { font-size: 1.15em; margin-top: 2em; }
.meta { color: #5b6475; margin: .2em 0; }
table { border-collapse: collapse; margin: .6em 0; }
th, td { padding: .25em .6em; border-bottom: 1px solid #e2e5ea; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f5f8; font-weight: 600; }
td.sub { color: #5b6475; padding-left: 1.5em; }
.warn { color: #8a5a00; background: #fff6e0; padding: .4em .8em; border-radius: 4px; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; border: 1px solid #e2e5ea; border-radius: 6px; padding: .4em; }
figcaption { font-size: .85em; color: #5b6475; text-align: center; }
.strong { font-weight: 700; }
"""


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value:.{digits}f}"


def _signed(value: Any) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Cells are already-escaped HTML."""
    out = ["<table><thead><tr>"]
    out += [f"<th>{escape(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def labels_table(labels: dict[str, Any], multiclass: dict[str, Any]) -> str:
    rows = []
    for name, s in labels.items():
        c = s["confusion"]
        rows.append(
            [escape(name), str(s["n"])]
            + [_num(s[k]) for k in ("accuracy", "kappa", "precision", "recall", "tnr", "f1")]
            + [str(c[k]) for k in ("tp", "fp", "fn", "tn")]
        )
        if name in multiclass:
            m = multiclass[name]
            rows.append(
                [f'<span class="sub">{escape(name)}: all values</span>', str(m["n"]),
                 _num(m["accuracy"]), _num(m["kappa"])] + [""] * 8
            )  # fmt: skip
    head = ["label", "n", "accuracy", "κ", "precision", "recall / TPR", "TNR", "F1"]
    return _table(head + ["TP", "FP", "FN", "TN"], rows)


def matrices(multiclass: dict[str, Any]) -> str:
    out = []
    for name, m in multiclass.items():
        classes = sorted({c for row in m["matrix"].values() for c in row} | set(m["matrix"]))
        rows = [
            [f"judge {escape(j)}"] + [str(m["matrix"].get(j, {}).get(h, 0)) for h in classes]
            for j in classes
        ]
        out.append(f"<h3>{escape(name)}</h3>")
        out.append(_table(["judge \\ reviewer"] + [str(c) for c in classes], rows))
    return "".join(out)


def metrics_table(metrics: dict[str, Any]) -> str:
    rows = []
    for name, s in metrics.items():
        ci = "–" if s["ci_low"] is None else f"[{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]"
        excludes_zero = s["ci_low"] is not None and (s["ci_low"] > 0 or s["ci_high"] < 0)
        bias = f'<span class="{"strong" if excludes_zero else ""}">{_signed(s["bias"])}</span>'
        rows.append(
            [escape(name), str(s["n"]), _num(s["judge_mean"]), _num(s["effective_mean"]), bias, ci]
            + [_num(s[k]) for k in ("pearson", "spearman", "rmse")]
        )
    head = ["metric", "n", "judge mean", "reviewed mean", "bias", "95 % CI"]
    return _table(head + ["Pearson", "Spearman", "RMSE"], rows)


def scatter(name: str, points: Sequence[tuple[float, float]], stats: dict[str, Any]) -> str:
    """Judge (x) against reviewed (y) per record, with the y = x diagonal."""
    size, pad = 260, 36
    values = [v for p in points for v in p] or [0.0, 1.0]
    low, high = min(0.0, min(values)), max(1.0, max(values))
    span = (high - low) or 1.0

    inner = 10  # keep points on the edges off the frame and the tick labels

    def x(v: float) -> float:
        return pad + inner + (v - low) / span * (size - 2 * pad - 2 * inner)

    def y(v: float) -> float:
        return size - pad - inner - (v - low) / span * (size - 2 * pad - 2 * inner)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
        f'viewBox="0 0 {size} {size}" role="img" aria-label="{escape(name)}">',
        f'<rect x="{pad}" y="{pad}" width="{size - 2 * pad}" height="{size - 2 * pad}" '
        'fill="#fafbfc" stroke="#c8cdd5"/>',
        f'<line x1="{x(low):.1f}" y1="{y(low):.1f}" x2="{x(high):.1f}" y2="{y(high):.1f}" '
        'stroke="#9aa3b2" stroke-dasharray="4 3"/>',
    ]
    for tick in (low, (low + high) / 2, high):
        parts.append(
            f'<text x="{x(tick):.1f}" y="{size - pad + 14}" font-size="10" '
            f'text-anchor="middle" fill="#5b6475">{tick:g}</text>'
            f'<text x="{pad - 4}" y="{y(tick) + 3:.1f}" font-size="10" text-anchor="end" '
            f'fill="#5b6475">{tick:g}</text>'
        )
    parts.append(
        f'<text x="{size / 2}" y="{size - 6}" font-size="11" text-anchor="middle">judge</text>'
        f'<text x="12" y="{size / 2}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {size / 2})">reviewed</text>'
    )
    counts: dict[tuple[float, float], int] = {}
    for point in points:
        counts[point] = counts.get(point, 0) + 1
    for (j, r), count in counts.items():
        radius = 3 + 2 * math.log2(count)  # repeated points (common with 0/1 metrics) grow
        parts.append(
            f'<circle cx="{x(j):.1f}" cy="{y(r):.1f}" r="{radius:.1f}" fill="#2f6fdb" '
            f'fill-opacity="0.45" stroke="#1d4fa5"><title>{count} × ({j:g}, {r:g})</title>'
            "</circle>"
        )
    parts.append("</svg>")
    caption = (
        f"{escape(name)} · n={stats['n']} · bias {_signed(stats['bias'])} · "
        f"r={_num(stats['pearson'], 2)}"
    )
    return f"<figure>{''.join(parts)}<figcaption>{caption}</figcaption></figure>"


def bias_plot(metrics: dict[str, Any], points: dict[str, list[tuple[float, float]]]) -> str:
    """Each rate metric's bias as a dot with its 95 % interval, around a zero line.

    Metrics with values outside [0, 1] (counts, lengths) would squash the scale of
    the rates, so they stay in the table only.
    """
    rows = [
        (n, s)
        for n, s in metrics.items()
        if s["bias"] is not None and all(0 <= v <= 1 for p in points.get(n, []) for v in p)
    ]
    if not rows:
        return ""
    left, width, row_h = 220, 420, 22
    extent = max(
        [abs(v) for _, s in rows for v in (s["bias"], s["ci_low"], s["ci_high"]) if v is not None]
        + [0.05]
    )
    height = row_h * len(rows) + 36

    def x(v: float) -> float:
        return left + (v + extent) / (2 * extent) * width

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" height="{height}" '
        'role="img" aria-label="bias per metric">',
        f'<line x1="{x(0):.1f}" y1="6" x2="{x(0):.1f}" y2="{height - 24}" stroke="#9aa3b2"/>',
    ]
    for tick in (-extent, 0.0, extent):
        parts.append(
            f'<text x="{x(tick):.1f}" y="{height - 8}" font-size="10" text-anchor="middle" '
            f'fill="#5b6475">{tick:+.3f}</text>'
        )
    for i, (name, s) in enumerate(rows):
        cy = 16 + i * row_h
        parts.append(
            f'<text x="{left - 8}" y="{cy + 4}" font-size="12" text-anchor="end">'
            f"{escape(name)}</text>"
        )
        if s["ci_low"] is not None:
            parts.append(
                f'<line x1="{x(s["ci_low"]):.1f}" y1="{cy}" x2="{x(s["ci_high"]):.1f}" '
                f'y2="{cy}" stroke="#1d4fa5" stroke-width="2"/>'
            )
        parts.append(f'<circle cx="{x(s["bias"]):.1f}" cy="{cy}" r="4" fill="#d0452f"/>')
    parts.append("</svg>")
    return (
        "<figure>"
        + "".join(parts)
        + (
            "<figcaption>bias = judge − reviewed, with the bootstrap 95 % interval "
            "(rates in [0, 1] only)</figcaption>"
            "</figure>"
        )
    )


def estimate_section(block: dict[str, Any]) -> str:
    """The corrected estimate of each mean from the review draw (docs/estimate.md)."""
    from .estimates import draw_line, stop_line

    out = ["<h2>Corrected estimate (judge on every record + reviewed draw)</h2>"]
    out.append(f'<p class="meta">{escape(draw_line(block))}</p>')
    rows = [
        [escape(name), _num(m["estimate"], 4),
         "–" if m["ci"] is None else f"{m['ci'][0]:.4f} – {m['ci'][1]:.4f}",
         str(m["n_used"]), "" if m["more_reviews"] is None else str(m["more_reviews"])]
        for name, m in block["metrics"].items()
    ]  # fmt: skip
    out.append(_table(["metric", "estimate", "95 % interval", "used", "more reviews"], rows))
    for line in [stop_line(block), *block.get("warnings", ())]:
        if line:
            out.append(f'<p class="warn">{escape(line)}</p>')
    return "".join(out)


def render(report: dict[str, Any], points: dict[str, list[tuple[float, float]]]) -> str:
    dataset = escape(str(report.get("dataset", "")))
    body = [f"<h1>Judge agreement — {dataset}</h1>"]
    body.append(
        f'<p class="meta">{report["records"]} reviewed records · judge = prediction, reviewer = '
        "truth · generated " + datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC") + "</p>"
    )
    sample = report.get("sample")
    if sample:
        how = escape(sample["method"] + (f" by {sample['by']}" if sample["by"] else ""))
        body.append(
            f'<p class="meta">Sample {sample["id"]}: {sample["n"]} of {sample["population"]} '
            f"records, {how}, seed {sample['seed']}; {sample['reviewed']} reviewed.</p>"
        )
    for warning in report["warnings"]:
        body.append(f'<p class="warn">{escape(warning)}</p>')
    body.append("<h2>Labels: judge vs reviewer</h2>")
    body.append(labels_table(report["labels"], report["multiclass"]) if report["labels"] else
                "<p>No labels compared.</p>")  # fmt: skip
    if report["multiclass"]:
        body.append("<h2>Confusion of multi-valued labels</h2>" + matrices(report["multiclass"]))
    body.append("<h2>Metrics: judge vs reviewed</h2>")
    if report["metrics"]:
        body.append(metrics_table(report["metrics"]))
        body.append(bias_plot(report["metrics"], points))
        body.append('<div class="plots">')
        for name, stats in report["metrics"].items():
            body.append(scatter(name, points.get(name, []), stats))
        body.append("</div>")
    else:
        body.append("<p>No per-record metrics.</p>")
    if report.get("estimate"):
        body.append(estimate_section(report["estimate"]))
    ind = report["independent"]
    body.append("<h2>Independent agreement (blind first pass)</h2>")
    if ind["records"]:
        body.append(f'<p class="meta">{ind["records"]} records with a blind pass.</p>')
        body.append(labels_table(ind["labels"], ind["multiclass"]))
    else:
        body.append("<p>No blind pass recorded.</p>")
    human = report.get("reviewers")
    if human:
        body.append("<h2>Reviewers vs each other</h2>")
        body.append(f'<p class="meta">{escape(", ".join(human["reviewers"]))}</p>')
        rows = [
            [escape(n), str(s["items"]), _num(s["percent_agreement"]), _num(s.get("kappa")),
             _num(s["alpha"])]
            for n, s in human["labels"].items()
        ]  # fmt: skip
        body.append(_table(["label", "items", "agreement", "Cohen's κ", "Krippendorff's α"], rows))
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Judge agreement — {dataset}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )
