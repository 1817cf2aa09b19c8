"""TRACe (docs/metrics.md): hand-computed cases for the three variants."""

from __future__ import annotations

import pytest

from ragreview.core.labels import check_layer
from ragreview.core.metrics import record_metrics
from ragreview.core.record import parse_record

DOCS = [
    {"sentences": [["0a", "aaaa"], ["0b", "bb"], ["0c", "cccccc"]]},
    {"sentences": [["1a", "dddddddd"]]},
]  # lengths 4, 2, 6, 8 -> total 20


def rec(documents=DOCS, response=(("a", "x"), ("b", "y")), scores=None):
    return parse_record(
        {
            "id": "t",
            "task": "trace",
            "documents": documents,
            "response": [list(s) for s in response],
            "scores": scores or {},
        }
    )


def layer(record, relevant=(), utilized=(), supported=None):
    raw = {
        "relevant": {k: True for k in relevant},
        "utilized": {k: True for k in utilized},
        "supported": supported or {},
    }
    return check_layer(record, raw, "labels.judge")


def values(record, labels, variant):
    out = record_metrics(record, labels, {"trace.variant": variant})
    return (
        out["trace.relevance"],
        out["trace.utilization"],
        out["trace.completeness"],
        out["trace.adherence"],
    )


CASES = [
    # (variant, relevant, utilized, supported, expected (rel, util, comp, adh))
    ("ragbench", ["0a", "0b"], ["0b", "1a"], {"a": True, "b": True}, (0.5, 0.5, 0.5, 1.0)),
    ("ragbench", [], ["0a"], {"a": False}, (0.0, 0.25, 1.0, 0.0)),  # no relevant -> 1.0
    ("ragbench", ["0a"], [], {}, (0.25, 0.0, 0.0, 1.0)),  # no verdicts: not unsupported
    ("length", ["0a", "0b"], ["0b", "1a"], {"a": True}, (6 / 20, 10 / 20, 2 / 6, 1.0)),
    ("length", [], [], {"b": False}, (0.0, 0.0, 1.0, 0.0)),
    ("capped20", ["0a", "0b"], ["0b", "1a", "0c"], {"a": True, "b": True}, (0.1, 1.0, 0.5, 1.0)),
    ("capped20", ["0a", "0b"], ["0b"], {"a": True}, (0.1, 0.5, 0.5, 0.0)),  # b has no verdict
    ("capped20", [], [], {}, (0.0, 0.0, 1.0, 0.0)),  # R empty, U empty -> completeness 1
    ("capped20", [], ["0a"], {"a": True, "b": True}, (0.0, 0.0, 0.0, 1.0)),  # U not empty -> 0
]


@pytest.mark.parametrize("variant, relevant, utilized, supported, expected", CASES)
def test_trace_variants(variant, relevant, utilized, supported, expected):
    record = rec()
    got = values(record, layer(record, relevant, utilized, supported), variant)
    assert got == pytest.approx(expected, abs=1e-12)


def test_capped20_relevance_is_capped():
    docs = [{"sentences": [[f"0{c}", "s"] for c in "abcdefghijklmnopqrstuvwxy"]}]
    record = rec(documents=docs)
    keys = [k for k, _ in record.doc_sentences]
    got = values(record, layer(record, keys, keys), "capped20")
    assert got[0] == 1.0 and got[1] == 1.0


@pytest.mark.parametrize("variant", ["ragbench", "length"])
def test_no_document_sentences(variant):
    record = rec(documents=[])
    assert values(record, layer(record), variant) == (0.0, 0.0, 1.0, 1.0)


def test_no_response_sentences_adherence():
    record = rec(response=())
    assert values(record, layer(record), "ragbench")[3] == 1.0
    assert values(record, layer(record), "capped20")[3] == 1.0  # vacuously all supported


def test_dotted_keys_mean_the_sentence():
    record = rec()
    labels = check_layer(
        record, {"relevant": {"0a.": True, "0b": True}, "utilized": {"0a": True}}, "judge"
    )
    assert values(record, labels, "ragbench")[:3] == (0.5, 0.25, 0.5)


def test_ragbench_raw_list_lengths_counted_like_ragbench():
    # RAGBench's list ["0a", "0a.", "0b"] has 3 entries for 2 keys: relevance 3/4,
    # completeness |{0a,0b} ∩ {0a}| / 3; utilized ["0a", "0a", "9z"]: 3/4.
    record = rec(scores={"ragbench.relevant_listed": 3, "ragbench.utilized_listed": 3})
    judge = layer(record, ["0a", "0b"], ["0a"])
    out = record_metrics(record, judge, {}, judge=judge)
    assert (out["trace.relevance"], out["trace.utilization"]) == (0.75, 0.75)
    assert out["trace.completeness"] == pytest.approx(1 / 3)
    # without the judge layer: the clean counts of the labelled keys
    assert values(record, judge, "ragbench")[:3] == pytest.approx((0.5, 0.25, 0.5))
    length = record_metrics(record, judge, {"trace.variant": "length"}, judge=judge)
    assert length["trace.relevance"] == pytest.approx(6 / 20)  # ragbench variant only
    # A reviewer adds 0c and drops 0b: the judge's one extra entry still counts.
    reviewed = layer(record, ["0a", "0c"], ["0a", "0c"])
    out = record_metrics(record, reviewed, {}, judge=judge)
    assert out["trace.relevance"] == pytest.approx(3 / 4)
    assert out["trace.utilization"] == pytest.approx((2 + 2) / 4)
    assert out["trace.completeness"] == pytest.approx(2 / 3)
    reviewed = layer(record, ["0a"], [])
    out = record_metrics(record, reviewed, {}, judge=judge)
    assert out["trace.relevance"] == pytest.approx(2 / 4)
    assert out["trace.utilization"] == pytest.approx(2 / 4)


def test_unknown_variant_is_an_error():
    record = rec()
    with pytest.raises(ValueError):
        values(record, layer(record), "nope")
