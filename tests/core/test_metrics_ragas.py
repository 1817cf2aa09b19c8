"""ragas (docs/metrics.md): denominators from the record, average precision, legacy relevancy."""

from __future__ import annotations

import pytest

from ragreview.core.metrics import record_metrics
from ragreview.core.record import parse_record


def rec(statements=0, refs=0, contexts=0, task="ragas", scores=None):
    return parse_record(
        {
            "id": "g",
            "task": task,
            "statements": [[f"s{i + 1}", "x"] for i in range(statements)],
            "reference_statements": [[f"r{i + 1}", "x"] for i in range(refs)],
            "documents": [{"sentences": [[f"{i}a", "x"], [f"{i}b", "y"]]} for i in range(contexts)],
            "scores": scores or {},
        }
    )


def test_faithfulness_counts_every_statement():
    # A judge that returned one verdict for five statements does not score 1.0.
    out = record_metrics(rec(statements=5), {"statement": {"s1": True}}, {})
    assert out["ragas.faithfulness"] == 0.2


def test_no_statements_no_faithfulness():
    out = record_metrics(rec(), {}, {})
    assert out["ragas.faithfulness"] is None and out["ragas.context_recall"] is None


def test_context_recall():
    out = record_metrics(rec(refs=4), {"attributed": {"r1": True, "r2": False, "r4": True}}, {})
    assert out["ragas.context_recall"] == 0.5


@pytest.mark.parametrize(
    "useful, expected",
    [
        ((1, 0, 1), (1 / 1 + 2 / 3) / (2 + 1e-10)),
        ((0, 1), (1 / 2) / (1 + 1e-10)),
        ((0, 0, 0), 0.0),  # none useful -> 0.0, not None
        ((), 0.0),  # no contexts but verdict labels present -> 0.0 as ragas
        ((1, 1), 2 / (2 + 1e-10)),
    ],
)
def test_context_precision(useful, expected):
    record = rec(contexts=len(useful))
    labels = {"context_useful": {f"c{i}": bool(v) for i, v in enumerate(useful)} or {"c0": False}}
    assert record_metrics(record, labels, {})["ragas.context_precision"] == pytest.approx(
        expected, abs=1e-15
    )


def test_legacy_context_relevancy():
    record = rec(contexts=2)  # 4 sentences
    out = record_metrics(record, {"relevant": {"0a": True, "1b": True}}, {})
    assert out["ragas.context_relevancy"] == 0.5
    imported = rec(scores={"ragas.context_relevancy": 0.3})
    assert record_metrics(imported, {}, {})["ragas.context_relevancy"] == 0.3
    assert record_metrics(rec(), {"relevant": {}}, {})["ragas.context_relevancy"] is None


def test_context_precision_needs_contexts_or_verdicts():
    assert "ragas.context_precision" not in record_metrics(rec(), {}, {})
    assert record_metrics(rec(contexts=2), {}, {})["ragas.context_precision"] == 0.0
