"""Long-form factuality (docs/metrics.md): hand cases and the FActScore human labels."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragreview.core.metrics import dataset_values, record_metrics, record_values
from ragreview.core.metrics.aggregate import totals_of
from ragreview.core.metrics.longform import f1_at_k
from ragreview.core.record import parse_record

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "factscore"


def rec(n_facts: int):
    return parse_record(
        {"id": "l", "task": "longform", "facts": [[f"f{i + 1}", "x", None] for i in range(n_facts)]}
    )


def lab(*values):
    return {"fact": {f"f{i + 1}": v for i, v in enumerate(values) if v is not None}}


@pytest.mark.parametrize(
    "labels, k, expected",
    [
        # (S, NS, IR, precision, recall@K, F1@K)
        (("S", "S", "NS", "IR"), 100, (2, 1, 1, 2 / 3, 0.02, 2 * (2 / 3) * 0.02 / (2 / 3 + 0.02))),
        (("S", "S", "NS", "IR"), 2, (2, 1, 1, 2 / 3, 1.0, 0.8)),
        (("IR", "IR"), 100, (0, 0, 2, None, 0.0, 0.0)),  # all irrelevant: precision undefined
        (("NS",), 100, (0, 1, 0, 0.0, 0.0, 0.0)),  # S = 0 -> F1 0 (SAFE)
        (("S",) * 5, 3, (5, 0, 0, 1.0, 1.0, 1.0)),  # recall capped at 1
    ],
)
def test_longform_cases(labels, k, expected):
    out = record_metrics(rec(len(labels)), lab(*labels), {"longform.k": k})
    got = tuple(
        out[f"longform.{n}"]
        for n in ("supported", "not_supported", "irrelevant", "precision", "recall_at_k", "f1_at_k")
    )
    assert got == pytest.approx(expected)


def test_no_facts_is_an_abstention_with_no_metrics():
    out = record_metrics(rec(0), {}, {})
    assert out and all(v is None for v in out.values())
    # Facts present but none labelled count the same way.
    assert all(v is None for v in record_metrics(rec(3), {}, {}).values())


def test_denominators_from_the_record_not_stray_verdicts():
    out = record_metrics(rec(2), {"fact": {"f1": "S", "f9": "S"}}, {})
    assert out["longform.supported"] == 1.0


def test_f1_rejects_bad_k():
    with pytest.raises(ValueError):
        f1_at_k(1, 1, 0)


def test_dataset_mean_and_population_std_skip_abstentions():
    rows = [
        record_values(rec(2), lab("S", "NS"), {"longform.k": 1}),  # P .5 R 1 -> 2/3
        record_values(rec(1), lab("NS"), {"longform.k": 1}),  # 0
        record_values(rec(0), {}, {"longform.k": 1}),  # abstention: not counted
    ]
    out = dataset_values(totals_of(rows))
    assert out["longform.f1_at_k"] == pytest.approx(1 / 3)
    assert out["longform.f1_at_k_std"] == pytest.approx(1 / 3)  # population std of {2/3, 0}


def factscore_facts(row: dict) -> tuple[list, dict]:
    """A FActScore row's facts (docs/formats.md: the human-atomic-facts, keyed f1, f2, …)
    and their labels; ``annotations: null`` is an abstention (no facts). Written here
    independently of the adapter, as the reference the tests compare it with."""
    facts, labels = [], {}
    for sentence in row["annotations"] or []:
        for fact in sentence.get("human-atomic-facts") or []:
            key = f"f{len(facts) + 1}"
            facts.append([key, fact["text"], None])
            labels[key] = fact["label"]
    return facts, labels


def factscore_records(path: Path):
    """FActScore rows as canonical records, with their labels as a layer."""
    for line in path.read_text().splitlines():
        row = json.loads(line)
        facts, labels = factscore_facts(row)
        yield (
            parse_record({"id": row["topic"], "task": "longform", "facts": facts}),
            {"fact": labels},
        )


@pytest.mark.parametrize(
    "name, k, rows, expected",
    [
        ("ChatGPT", 100, 157, 0.3031),
        ("ChatGPT", 64, 157, 0.4149),
        ("InstructGPT", 100, 181, 0.1831),
        ("InstructGPT", 64, 181, 0.2563),
    ],
)
def test_factscore_human_labels(name, k, rows, expected):
    path = FIXTURES / f"factscore_labeled_{name}.jsonl"
    if not path.exists():
        pytest.skip("FActScore fixtures absent")
    settings = {"longform.k": k}
    totals = totals_of(record_values(r, lab, settings) for r, lab in factscore_records(path))
    assert totals["longform.f1_at_k"][0] == rows
    out = dataset_values(totals, settings)
    assert round(out["longform.f1_at_k"], 4) == expected
    first = next(factscore_records(path))
    if name == "ChatGPT":  # first row: S=7, NS=19, IR=9 -> F1@100 = 0.111111
        vals = record_metrics(*first, {"longform.k": 100})
        assert (vals["longform.supported"], vals["longform.not_supported"]) == (7, 19)
        assert math.isclose(vals["longform.f1_at_k"], 0.111111, abs_tol=1e-6)
