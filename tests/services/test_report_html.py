"""The HTML agreement report: self-contained, escaped, and rendered by a real browser."""

from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess

import pytest

from ragreview.core.agreement_report import Reviewed, build, metric_pairs
from ragreview.core.record import parse_record
from ragreview.services import report_html

RECORD = parse_record(
    {"id": "t", "documents": [{"sentences": [["0a", "x"], ["0b", "y"], ["0c", "z"]]}]}
)


def _report():
    rng = random.Random(5)
    reviewed = [
        Reviewed(
            RECORD,
            {"relevant": {"0a": True}},
            {"relevant": {"0b": rng.random() < 0.3}},
            blind={"relevant": {"0a": rng.random() < 0.8}},
        )
        for _ in range(30)
    ]
    per_record = []
    for _ in range(30):
        j = rng.random()
        a = float(rng.random() < 0.7)
        per_record.append(
            (
                {"trace.relevance": j, "trace.adherence": a},
                {"trace.relevance": min(1, max(0, j - 0.1 + rng.gauss(0, 0.1))),
                 "trace.adherence": a if rng.random() < 0.8 else 1 - a},
            )
        )  # fmt: skip
    report = build(reviewed, metric_pairs(per_record), resamples=500)
    report["dataset"] = "<script>alert(1)</script>"
    report["reviewers"] = {
        "reviewers": ["ann", "<b>bob</b>"],
        "records": 3,
        "labels": {"relevant": {"items": 9, "percent_agreement": 0.9, "kappa": 0.7, "alpha": 0.69}},
    }
    return report, metric_pairs(per_record)


def test_html_is_self_contained_and_escaped():
    report, points = _report()
    page = report_html.render(report, points)
    assert "<script" not in page and "<link" not in page and " src=" not in page
    urls = set(re.findall(r"https?://[^\s\"']+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}  # an XML namespace, never fetched
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;bob&lt;/b&gt;" in page
    assert page.count("<svg") == 3  # the bias plot and one scatter per metric
    assert page.count("<circle") >= 2 + 2  # bias dots + scatter points
    assert "trace.relevance" in page and "Krippendorff" in page
    assert "Independent agreement" in page


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_headless_chromium_renders_tables_and_plots(tmp_path):
    report, points = _report()
    page = tmp_path / "report.html"
    page.write_text(report_html.render(report, points), encoding="utf-8")
    base = [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
    ]  # fmt: skip
    dom = subprocess.run(
        [*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    # the browser parsed the tables and inline SVG into its DOM
    assert dom.count("<table>") == 4  # labels, metrics, independent, reviewers
    assert dom.count("<svg") == 3 and "<circle" in dom
    shot = tmp_path / "report.png"
    subprocess.run(
        [*base, "--window-size=1200,1600", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    data = shot.read_bytes()
    assert _png_size(data) == (1200, 1600)
    assert len(data) > 30_000  # a blank page compresses to a few kilobytes
