"""``stored_pairs``: a source's own scores under our canonical metric names."""

from __future__ import annotations

from ragreview.core.metrics.aggregate import stored_pairs
from ragreview.core.record import parse_record


def pairs(scores: dict, **settings) -> dict:
    return stored_pairs(parse_record({"id": "r", "scores": scores}), settings)


def test_the_first_alias_wins_whatever_the_order_in_the_file() -> None:
    scores = {"stored.RougeL": 0.1, "stored.rougeL_stemFalse": 0.2, "stored.Recall": 0.3}
    assert pairs(scores) == {"mtrag.recall": 0.3, "mtrag.rouge_l": 0.2}
    assert list(pairs(scores)) == ["mtrag.recall", "mtrag.rouge_l"]  # canonical order
    assert pairs({"stored.rouge-l": 0.4}) == {"mtrag.rouge_l": 0.4}


def test_names_are_normalized_and_other_scores_ignored() -> None:
    scores = {"stored.Relevance Score": 0.5, "stored.unknown": 1.0, "ragbench.relevant_listed": 3}
    assert pairs(scores) == {"trace.relevance": 0.5}


def test_f1_at_the_k_in_force() -> None:
    scores = {"stored.f1_64": 0.6, "stored.f1_-1": 0.7}
    assert pairs(scores) == {"longform.f1_at_k": 0.7}  # SAFE's f1_-1 is K = 100
    assert pairs(scores, **{"longform.k": 64}) == {"longform.f1_at_k": 0.6}
