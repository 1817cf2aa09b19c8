"""Which items are compared, binary views, and the assembled report on small reviews."""

import pytest

from ragreview.core import label_items
from ragreview.core.agreement_report import (
    Reviewed,
    build,
    label_agreement,
    metric_agreement,
    reviewer_agreement,
)
from ragreview.core.labels import effective
from ragreview.core.record import parse_record
from ragreview.core.sampling import allocate, draw

TRACE = parse_record(
    {
        "id": "t1",
        "task": "trace",
        "documents": [{"sentences": [["0a", "x"], ["0b", "y"], ["0c", "z"]]}],
        "response": [["a", "r1"], ["b", "r2"]],
    }
)
FACTS = parse_record(
    {"id": "f", "facts": [["f1", "x", None], ["f2", "y", None], ["f3", "z", None]]}
)


def test_absent_relevant_is_false_and_every_target_counts():
    judge = {"relevant": {"0a": True}}
    human = {"relevant": {"0b": True}}
    pairs = label_items.paired(TRACE, judge, effective(judge, human), "relevant")
    assert pairs == [(True, True), (False, True), (False, False)]


def test_label_family_not_on_record_is_not_compared():
    untasked = parse_record({"id": "u", "documents": [{"sentences": [["0a", "x"]]}]})
    assert label_items.paired(untasked, {}, {}, "relevant") == []
    assert label_items.paired(untasked, {"fact": {}}, {}, "relevant") == []
    assert label_items.paired(TRACE, {"relevant": {"0a": True}}, {}, "rejected") == []
    # a sibling label of the same family makes an absent relevant mean "none relevant"
    assert label_items.paired(untasked, {"supported": {}}, {}, "relevant") == [(False, False)]


def test_trace_record_where_the_judge_found_nothing_relevant_counts():
    # the judge layer has no relevant label at all: every sentence is "not relevant"
    pairs = label_items.paired(TRACE, {}, {"relevant": {"0b": True}}, "relevant")
    assert pairs == [(False, False), (False, True), (False, False)]
    assert label_items.paired(TRACE, {}, {}, "utilized") == [(False, False)] * 3


def test_item_without_default_needs_both_values():
    judge = {"supported": {"a": True}}
    human = effective(judge, {"supported": {"b": False}})
    assert label_items.paired(TRACE, judge, human, "supported") == [(True, True)]
    _, _, unpaired = label_agreement([(TRACE, judge, human)])
    assert unpaired == {"supported": 1}


def test_support_keys_become_one_item_per_candidate():
    judge = {"support_keys": {"a": ["0a", "0b"]}}
    human = effective(judge, {"support_keys": {"a": ["0a", "general"]}})
    pairs = dict(
        zip(
            label_items.values(TRACE, judge, "support_keys"),
            label_items.paired(TRACE, judge, human, "support_keys"),
        )
    )
    assert pairs[("a", "0a")] == (True, True)
    assert pairs[("a", "0b")] == (True, False)
    assert pairs[("a", "general")] == (False, True)
    assert pairs[("a", "0c")] == (False, False)
    assert len(pairs) == 3 + 4  # three doc sentences and four special tokens


@pytest.mark.parametrize(
    "name,value,positive",
    [
        ("fact", "S", True),
        ("fact", "NS", False),
        ("fact", "IR", False),
        ("idk", 1, True),
        ("idk", 0.5, False),
        ("idk", 0, False),
        ("answerability", "ANSWERABLE", True),
        ("answerability", "PARTIAL", False),
        ("rb_llm_rating", 6, True),
        ("rb_llm_rating", 5, False),
        ("relevant", True, True),
    ],
)
def test_binary_views(name, value, positive):
    assert label_items.binary(name, value) is positive


def test_report_on_a_small_constructed_review():
    # record 1: judge says 0a, 0b relevant; reviewer removes 0b and adds 0c
    # record 2 (same docs): judge 0a relevant, reviewer accepts
    r1 = Reviewed(
        TRACE,
        {"relevant": {"0a": True, "0b": True}},
        {"relevant": {"0b": False, "0c": True}},
    )
    r2 = Reviewed(TRACE, {"relevant": {"0a": True}}, {})
    r3 = Reviewed(
        FACTS,
        {"fact": {"f1": "S", "f2": "S", "f3": "IR"}},
        {"fact": {"f2": "NS"}},
        blind={"fact": {"f1": "S", "f2": "NS", "f3": "NS"}},
    )
    report = build([r1, r2, r3])
    rel = report["labels"]["relevant"]
    # items: r1 0a TT, 0b TF, 0c FT; r2 0a TT, 0b FF, 0c FF
    assert rel["confusion"] == {"tp": 2, "fp": 1, "fn": 1, "tn": 2}
    assert rel["n"] == 6
    assert rel["accuracy"] == pytest.approx(4 / 6)
    assert rel["tpr"] == pytest.approx(2 / 3) and rel["tnr"] == pytest.approx(2 / 3)
    # p_o = 4/6, p_e = (3/6)(3/6)·2 = 0.5 -> κ = (2/3 − 1/2) / (1/2) = 1/3
    assert rel["kappa"] == pytest.approx(1 / 3)
    fact = report["labels"]["fact"]
    # binary view positive = S: f1 S/S TP, f2 S/NS FP, f3 IR/IR TN
    assert fact["confusion"] == {"tp": 1, "fp": 1, "fn": 0, "tn": 1}
    assert report["multiclass"]["fact"]["accuracy"] == pytest.approx(2 / 3)
    # trace records: a utilized label nobody gave means "not utilized" on all six
    assert set(report["labels"]) == {"relevant", "utilized", "fact"}
    assert report["labels"]["utilized"]["confusion"] == {"tp": 0, "fp": 0, "fn": 0, "tn": 6}
    assert report["records"] == 3
    # independent: only r3 has a blind pass; blind f3 NS vs judge IR is a miss
    ind = report["independent"]
    assert ind["records"] == 1
    assert ind["multiclass"]["fact"]["accuracy"] == pytest.approx(1 / 3)
    assert "relevant" not in ind["labels"]
    assert any("under 30): relevant 6," in w for w in report["warnings"])
    assert "no per-record metrics were given: the metrics section is empty" in report["warnings"]


def test_blind_pass_compares_only_the_labels_it_gave():
    judge = {"relevant": {"0a": True}, "utilized": {"0a": True}}
    r = Reviewed(TRACE, judge, {}, blind={"relevant": {"0a": True, "0c": True}})
    ind = build([r])["independent"]["labels"]
    assert set(ind) == {"relevant"}
    assert ind["relevant"]["confusion"] == {"tp": 1, "fp": 0, "fn": 1, "tn": 1}


def test_metric_agreement_uses_records_defined_under_both_layers():
    per_record = [
        ({"trace.relevance": 0.5, "longform.precision": None}, {"trace.relevance": 0.25}),
        ({"trace.relevance": 1.0, "longform.precision": 1.0}, {"trace.relevance": 1.0,
                                                                "longform.precision": 0.5}),
        ({"trace.relevance": 0.0}, {"trace.relevance": 0.25, "x": True}),
    ]  # fmt: skip
    m = metric_agreement(per_record, seed=0)
    assert m["trace.relevance"]["n"] == 3
    assert m["trace.relevance"]["judge_mean"] == pytest.approx(0.5)
    assert m["trace.relevance"]["effective_mean"] == pytest.approx(0.5)
    assert m["trace.relevance"]["bias"] == pytest.approx(0.0)
    assert m["longform.precision"]["n"] == 1
    assert m["longform.precision"]["bias"] == pytest.approx(0.5)
    assert m["longform.precision"]["ci_low"] == m["longform.precision"]["ci_high"] == 0.5
    assert "x" not in m


def test_reviewer_agreement_two_and_three_reviewers():
    judge = {"relevant": {"0a": True}}
    a = effective(judge, {})
    b = effective(judge, {"relevant": {"0b": True}})
    c = effective(judge, {"relevant": {"0a": False}})
    two = reviewer_agreement([(TRACE, judge, [a, b])], ["ann", "bob"])
    rel = two["labels"]["relevant"]
    # units 0a (T,T), 0b (F,T), 0c (F,F): p_o = 2/3, p_e = (1/3)(2/3) + (2/3)(1/3) = 4/9
    assert rel["items"] == 3
    assert rel["kappa"] == pytest.approx((2 / 3 - 4 / 9) / (1 - 4 / 9))
    assert rel["percent_agreement"] == pytest.approx(2 / 3)
    three = reviewer_agreement([(TRACE, judge, [a, b, c]), (TRACE, judge, [a, None, None])],
                               ["ann", "bob", "cy"])  # fmt: skip
    assert "kappa" not in three["labels"]["relevant"]
    assert three["records"] == 1


def test_allocate_largest_remainder():
    assert allocate([5, 3, 2], 5) == [3, 1, 1]  # 2.5, 1.5, 1.0: tie goes to the first
    assert allocate([1, 1, 8], 5) == [1, 0, 4]  # 0.5, 0.5, 4.0
    assert sum(allocate([7, 11, 13], 10)) == 10
    with pytest.raises(ValueError):
        allocate([2], 3)


def test_draw_is_seeded_stratified_and_in_file_order():
    units = [(i, "a" if i < 60 else "b") for i in range(100)]
    picked = draw(units, 10, seed=42)
    assert picked == draw(units, 10, seed=42)
    assert picked != draw(units, 10, seed=43)
    assert picked == sorted(picked)
    assert sum(1 for i in picked if i < 60) == 6
    assert len(set(picked)) == 10
