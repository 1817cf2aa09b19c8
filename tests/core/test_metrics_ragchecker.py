"""RAGChecker's metrics against ``ragchecker/computation.py`` (per result) and
``evaluator.py`` (aggregate = numpy's round(np.mean(values) * 100, 1)), on RAGChecker's
own checked example and on hand-computed cases."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path

import pytest

from ragreview import formats
from ragreview.core.import_items import ImportItem
from ragreview.core.keys import cell_key
from ragreview.core.labels import effective
from ragreview.core.metrics import ragchecker as rc
from ragreview.core.metrics import record_metrics
from ragreview.core.record import parse_record

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "ragchecker" / "checking_outputs.json"
# fixtures/README.md: the example's aggregates as RAGChecker printed them
AGGREGATES = {
    "overall": {"precision": 76.4, "recall": 62.5, "f1": 68.3},
    "retriever": {"claim_recall": 61.4, "context_precision": 87.5},
    "generator": {
        "context_utilization": 87.5,
        "noise_sensitivity_in_relevant": 19.1,
        "noise_sensitivity_in_irrelevant": 0.0,
        "hallucination": 4.5,
        "self_knowledge": 27.3,
        "faithfulness": 68.2,
    },
}


def _items() -> list[ImportItem]:
    _, items = formats.read(FIXTURE)
    out = [i for i in items if isinstance(i, ImportItem)]
    assert len(out) == 2
    return out


def test_every_per_result_value_is_the_stored_one_exactly() -> None:
    stored = [r["metrics"] for r in json.loads(FIXTURE.read_text())["results"]]
    for item, want in zip(_items(), stored, strict=True):
        got = rc.values(item.record, item.judge)
        assert got == want  # exact float equality, all eleven
        canonical = record_metrics(item.record, item.judge, {})
        assert canonical == {f"ragchecker.{k}": v for k, v in want.items()}


def test_the_aggregates_are_the_files_exactly() -> None:
    rows = [rc.values(i.record, i.judge) for i in _items()]
    assert rc.aggregates(rows) == AGGREGATES
    assert json.loads(FIXTURE.read_text())["metrics"] == AGGREGATES


np = pytest.importorskip("numpy")


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 300, 1031])
def test_numpy_sum_and_rounding_are_numpys(n: int) -> None:
    rng = random.Random(n)
    for _ in range(20):
        xs = [rng.choice([0.0, 1.0, 1 / 3, 2 / 7, rng.random()]) for _ in range(n)]
        assert rc.numpy_sum(xs) == float(np.add.reduce(np.array(xs)))
        assert rc.aggregate(xs) == float(round(np.mean(xs) * 100, 1))


def _record(response: int, answer: int, chunks: int):
    return parse_record(
        {
            "id": "x",
            "task": "ragchecker",
            "documents": [{"sentences": [[f"{c}a", f"chunk {c}"]]} for c in range(chunks)],
            "statements": [[f"s{i + 1}", f"claim {i}"] for i in range(response)],
            "reference_statements": [[f"r{j + 1}", f"gt {j}"] for j in range(answer)],
        }
    )


def _layer(a2r: str, r2a: str, ret2resp: list[str], ret2ans: list[str]) -> dict:
    """Letters E / N / C per claim, and per claim a row of letters per chunk."""
    word = {"E": "Entailment", "N": "Neutral", "C": "Contradiction"}
    return {
        "answer2response": {f"s{i + 1}": word[v] for i, v in enumerate(a2r)},
        "response2answer": {f"r{i + 1}": word[v] for i, v in enumerate(r2a)},
        "retrieved2response": {
            cell_key(f"s{i + 1}", c): word[v]
            for i, row in enumerate(ret2resp)
            for c, v in enumerate(row)
        },
        "retrieved2answer": {
            cell_key(f"r{i + 1}", c): word[v]
            for i, row in enumerate(ret2ans)
            for c, v in enumerate(row)
        },
    }


# (response claims, gt claims, chunks, labels, expected), worked by hand from computation.py
CASES = [
    pytest.param(
        2, 2, 2, _layer("EN", "EC", ["EN", "NN"], ["NE", "NN"]),
        # P 1/2, R 1/2; gt r1 recalled (by c1): claim_recall 1/2; chunk c1 useful: cp 1/2;
        # r1 recalled and entailed: cu 1; c1 relevant, c0 not: s1 faithful via c0
        # (irrelevant) but correct; s2 unfaithful and wrong: hallucination 1/2
        {"precision": 0.5, "recall": 0.5, "f1": 0.5, "claim_recall": 0.5,
         "context_precision": 0.5, "context_utilization": 1.0,
         "noise_sensitivity_in_relevant": 0.0, "noise_sensitivity_in_irrelevant": 0.0,
         "hallucination": 0.5, "self_knowledge": 0.0, "faithfulness": 0.5},
        id="two-by-two",
    ),
    pytest.param(
        2, 1, 2, _layer("NN", "E", ["EE", "NE"], ["EN"]),
        # c0 relevant, c1 not; s1 wrong, entailed by c0 (relevant): ns_rel; s2 wrong,
        # entailed only by c1 (irrelevant): ns_irr; both faithful
        {"precision": 0.0, "recall": 1.0, "f1": 0.0, "claim_recall": 1.0,
         "context_precision": 0.5, "context_utilization": 1.0,
         "noise_sensitivity_in_relevant": 0.5, "noise_sensitivity_in_irrelevant": 0.5,
         "hallucination": 0.0, "self_knowledge": 0.0, "faithfulness": 1.0},
        id="noise",
    ),
    pytest.param(
        0, 0, 1, _layer("", "", [], []),
        # empty claim lists: every metric 0.0 (computation.py's else branches)
        dict.fromkeys(rc.METRICS, 0.0),
        id="no-claims",
    ),
    pytest.param(
        1, 2, 0, _layer("E", "EN", [[]], [[], []]),
        # no chunk: claim_recall is np.mean of an empty array (NaN: undefined); the
        # other chunk metrics 0.0
        {**dict.fromkeys(rc.METRICS, 0.0), "precision": 1.0, "recall": 0.5,
         "f1": 2 * 1.0 * 0.5 / 1.5, "claim_recall": None},
        id="no-chunks",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("response", "answer", "chunks", "labels", "want"), CASES)
def test_hand_computed(response: int, answer: int, chunks: int, labels: dict, want: dict) -> None:
    assert rc.values(_record(response, answer, chunks), labels) == want


def test_an_unlabelled_claim_counts_as_not_entailed() -> None:
    record = _record(2, 0, 1)
    labels = {"answer2response": {"s1": "Entailment"}}  # s2 has no label
    assert rc.values(record, labels)["precision"] == 0.5


def _changed(before: dict, after: dict) -> dict:
    return {k: after[k] for k in before if after[k] != before[k]}


F = Fraction


@pytest.mark.parametrize(
    ("name", "target", "value", "want"),
    [
        # result 0 of the example: 11 response claims, 22 gt claims, 4 chunks; c0, c1
        # and c3 entail some gt claim (relevant), c2 none.
        # s11 (judged Contradiction, entailed by no chunk) becomes correct: precision
        # 8/11 -> 9/11, f1 = 2PR/(P+R) with R = 1/2, and it moves from hallucination
        # (1/11 -> 0) to self-knowledge (6/11 -> 7/11)
        ("answer2response", "s11", "Entailment",
         {"precision": F(9, 11), "f1": 2 * F(9, 11) * F(1, 2) / (F(9, 11) + F(1, 2)),
          "hallucination": F(0), "self_knowledge": F(7, 11)}),
        # r8 entailed by the response: recall 11/22 -> 12/22 and f1; r8 is recalled by
        # no chunk, so context utilization stays
        ("response2answer", "r8", "Entailment",
         {"recall": F(12, 22), "f1": 2 * F(8, 11) * F(12, 22) / (F(8, 11) + F(12, 22))}),
        # s11 (wrong) entailed by c2, an irrelevant chunk: it turns from a hallucination
        # into irrelevant-noise sensitivity, and it is now faithful (4/11 -> 5/11)
        ("retrieved2response", "s11/c2", "Entailment",
         {"noise_sensitivity_in_irrelevant": F(1, 11), "hallucination": F(0),
          "faithfulness": F(5, 11)}),
        # c2 entails r8: r8 is recalled (5/22 -> 6/22), c2 becomes useful (3/4 -> 1) and r8,
        # not entailed by the response, is recalled but unused (5/5 -> 5/6)
        ("retrieved2answer", "r8/c2", "Entailment",
         {"claim_recall": F(6, 22), "context_precision": F(1),
          "context_utilization": F(5, 6)}),
    ],
)  # fmt: skip
def test_one_override_changes_exactly_its_metrics(
    name: str, target: str, value: str, want: dict
) -> None:
    item = _items()[0]
    before = rc.values(item.record, item.judge)
    after = rc.values(item.record, effective(item.judge, {name: {target: value}}))
    got = _changed(before, after)
    assert set(got) == set(want)
    for metric, amount in want.items():
        assert got[metric] == pytest.approx(float(amount), abs=1e-15), metric
