"""Metrics at their edges, on hand-made records, against the reference code each follows.

Every case names the upstream function it follows and states its rule; the expected
values are worked out by hand from that rule (the reference code is not run here: it
needs models and services that are not available offline).
"""

from __future__ import annotations

import pytest

from ragreview.core.metrics import (
    dataset_values,
    record_metrics,
    record_values,
    stored_pairs,
    undefined_counts,
)
from ragreview.core.metrics.aggregate import totals_of
from ragreview.core.record import parse_record

# -- MT-RAG (IBM/mt-rag-benchmark, scripts/evaluation) ---------------------------------


def mtrag_row(
    contexts=("Cats sit on mats.",), prediction="the cat sat", answerability="ANSWERABLE"
):
    """An MT-RAG evaluation row as the record keeps it (``source``), ragreview-shaped."""
    row = {
        "task_id": "c::1",
        "contexts": [{"document_id": str(i), "text": t} for i, t in enumerate(contexts)],
        "targets": [{"speaker": "agent", "text": "the cat sat on the mat"}],
        "answerability": [answerability],
    }
    if prediction is not None:
        row["predictions"] = [{"text": prediction}]
    return row


def mtrag_record(row, scores=None):
    return parse_record(
        {
            "id": row["task_id"],
            "task": "mtrag",
            "response": [["a", row["predictions"][0]["text"]]] if "predictions" in row else [],
            "references": [t["text"] for t in row["targets"]],
            "documents": [
                {"sentences": [[f"{i}a", c["text"]]]} for i, c in enumerate(row["contexts"])
            ],
            "answerability": row["answerability"][0],
            "scores": scores or {},
            "source": {"format": "mtrag", "record": row},
        }
    )


# rougeL("the cat sat" vs "the cat sat on the mat"): LCS 3, P = 3/3, R = 3/6, F = 2/3
ROUGE = 2 / 3


def hmean(a, b, c):
    return 3 * a * b * c / (a * b + a * c + b * c)


def test_rb_agg_with_contexts_is_the_harmonic_mean():
    """run_algorithmic.rb_agg: recall = (BertscoreR[0] + 1) / 2, rouge =
    RougeL_stemFalse[0], extractiveness = (max(BertKPrec, None as 0) + 1) / 2, harmonic
    mean of the three."""
    record = mtrag_record(mtrag_row(), {"mtrag.bertscore_r": 0.4, "mtrag.bert_k_prec": 0.2})
    out = record_metrics(record, {}, {})
    assert out["mtrag.rouge_l"] == pytest.approx(ROUGE)
    assert out["mtrag.rb_agg"] == pytest.approx(hmean(0.7, ROUGE, 0.6))  # 0.6528…


def test_rb_agg_of_a_turn_with_no_contexts_is_0():
    """run_algorithmic.score loops over ``instance["contexts"]`` for the per-passage
    metrics, so a turn with none never gets 'BertKPrec'; rb_agg then sets
    extractiveness = 0, and "rouge == 0 or recall == 0 or extractiveness == 0" gives 0.
    Extractiveness_RougeL is never created either: undefined, not 0."""
    record = mtrag_record(mtrag_row(contexts=()), {"mtrag.bertscore_r": 0.4})
    out = record_metrics(record, {}, {})
    assert out["mtrag.rb_agg"] == 0.0
    assert out["mtrag.extractiveness"] is None
    assert out["mtrag.rouge_l"] == pytest.approx(ROUGE)  # the targets are still scored


def test_rb_llm_is_derived_from_the_judges_rating():
    """judge_wrapper.run_radbench_judge: RB_llm = extract_rating(judge text), i.e. the
    1-10 rating / 10, stored once; get_idk_score then reads the stored value as it is.
    The rating label (the importer reads RB_llm × 10) is what a reviewer corrects, and
    is never clamped again: a stored RB_llm 0 stays 0."""
    record = mtrag_record(mtrag_row())
    assert record_metrics(record, {"rb_llm_rating": {"*": 7}}, {})["mtrag.rb_llm"] == 0.7
    assert record_metrics(record, {"rb_llm_rating": {"*": 9.5}}, {})["mtrag.rb_llm"] == 0.95
    assert record_metrics(record, {"rb_llm_rating": {"*": 0}}, {})["mtrag.rb_llm"] == 0.0
    assert record_metrics(record, {"rb_llm_rating": {"*": 11}}, {})["mtrag.rb_llm"] == 1.1
    assert record_metrics(record, {}, {})["mtrag.rb_llm"] is None  # no judge ran


@pytest.mark.parametrize(
    "idk, under, expected",
    [
        # get_idk_underspec_score: 'answerability in ["UNDERSPECIFIED"] and
        # underspec_eval == 1' -> 1; '... and underspec_eval != 1' -> 0
        (0, 1, 1.0),
        (0, 0, 0.0),
        (0, 0.5, 0.0),
        (1, 0.5, 0.0),
        # no underspecified verdict: the file came from get_idk_score, which has no
        # UNDERSPECIFIED branch: 'idk_eval == 1' -> 0, else the raw metric (RB_llm 0.7)
        (0, None, 0.7),
        (0.5, None, 0.7),
        (1, None, 0.0),
    ],
)
def test_underspecified_task_conditioning(idk, under, expected):
    record = mtrag_record(mtrag_row(answerability="UNDERSPECIFIED"))
    labels = {"idk": {"*": idk}, "rb_llm_rating": {"*": 7}}
    if under is not None:
        labels["underspecified"] = {"*": under}
    out = record_metrics(record, labels, {})
    assert out["mtrag.rb_llm_idk"] == expected


def test_task_input_without_a_response_has_nothing_to_score():
    """A task input (no ``predictions``) has no text metric and no judge verdict: every
    MT-RAG metric is undefined (MT-RAG writes none of them), never 0."""
    for contexts in ((), ("Cats sit on mats.",)):
        record = mtrag_record(mtrag_row(contexts=contexts, prediction=None))
        out = record_metrics(record, {}, {})
        assert out and all(value is None for value in out.values()), out
    unanswerable = mtrag_record(mtrag_row(prediction=None, answerability="UNANSWERABLE"))
    assert record_metrics(unanswerable, {}, {})["mtrag.rb_agg_idk"] is None


def test_an_empty_prediction_is_scored():
    out = record_metrics(mtrag_record(mtrag_row(prediction="")), {}, {})
    assert out["mtrag.length"] == 0.0 and out["mtrag.recall"] == 0.0


# -- RGB (chen700564/RGB: evalue.py, reject_evalue.py, fact_evalue.py) ------------------


def rgb(task="rgb-noise", noise_rate=0.4, response="", parts=(("Paris",),), cf=()):
    obj = {
        "id": "r",
        "task": task,
        "noise_rate": noise_rate,
        "answer_parts": [list(p) for p in parts],
        "response": [["a", response]] if response else [],
        "counterfactual": list(cf),
    }
    return parse_record(obj)


def test_rgb_data_row_without_prediction_has_nothing_to_score():
    """An RGB data file (``query``, ``answer``, documents) has no ``prediction``: there
    is no ``label`` to count, so no metric and no rate (evalue.py never sees the row)."""
    for record in (rgb(), rgb(noise_rate=1.0), rgb("rgb-counterfactual", 0.0, cf=("Rome",))):
        out = record_values(record, {}, {})
        assert out and all(v is None for v in out.values()), out
    records = [rgb(), rgb("rgb-counterfactual", 0.0, cf=("Rome",))]
    totals = totals_of(record_values(r, {}, {}) for r in records)
    rates = dataset_values(totals, {})
    assert rates["rgb.accuracy"] is None and rates["rgb.error_correction_rate"] is None
    assert rates["rgb.correct"] is None
    assert undefined_counts(totals)["rgb.correct"] == 2


def labels(rejected=False, matched=(True,), detected=None, **script):
    """evalue.py's label (rejected, matched bits) and factlabel (detected); ``script``:
    a judge script's own verdict (not_addressed= / identified=)."""
    out = {"rejected": {"*": rejected}, "part_matched": {f"p{i}": m for i, m in enumerate(matched)}}
    if detected is not None:
        out["error_detected"] = {"*": detected}
    out.update({name: {"*": value} for name, value in script.items()})
    return out


def test_negative_rejection_rates_of_evalue_and_reject_evalue():
    """follows chen700564/RGB evalue.py (all_rate: 'noise_rate == 1 and label[0] == -1'
    or '0 not in label and 1 in label') and reject_evalue.py (reject_rate = #('not
    addressed' in evaluation) / n, all_rate = #('0 not in label and 1 in label') / n),
    each from its own verdicts: the LLM's never replaces evalue.py's label."""
    rows = [
        # label [-1], yet the LLM judge reads it as addressed
        (rgb(noise_rate=1.0, response="x"), labels(rejected=True, not_addressed=False)),
        (rgb(noise_rate=1.0, response="x"), labels(matched=(True,), not_addressed=False)),
        # answered wrong, which the LLM judge calls not addressed
        (rgb(noise_rate=1.0, response="x"), labels(matched=(False,), not_addressed=True)),
        (rgb(noise_rate=1.0, response="x"), labels(matched=(False,), not_addressed=False)),
    ]
    totals = totals_of(record_values(r, lab, {}) for r, lab in rows)
    out = dataset_values(totals, {})
    assert out["rgb.rejection_rate"] == 2 / 4  # evalue.py: rejected or correct
    assert out["rgb.reject_evalue.rejection_rate"] == 1 / 4  # reject_evalue.py reject_rate
    assert out["rgb.reject_evalue.accuracy"] == 1 / 4  # reject_evalue.py all_rate
    # a prediction file without the script's evaluation has no reject_evalue.py rate
    plain = totals_of(record_values(r, labels(rejected=True), {}) for r, _ in rows)
    assert "rgb.reject_evalue.rejection_rate" not in dataset_values(plain, {})


def test_counterfactual_correction_rates_of_evalue_and_fact_evalue():
    """follows chen700564/RGB evalue.py (fact_tt = #factlabel == 1; correct_tt adds '0
    not in label', so a rejection [-1] counts) and fact_evalue.py (rejecttt = #('has
    identified' or 'Yes' in evaluation); correct_tt adds '0 not in label and 1 in
    label'; all_rate = #correct / n), each from its own verdicts; both 0 when nothing
    was detected."""
    cf = ("Rome",)
    rows = [
        (rgb("rgb-counterfactual", 0.0, "x", cf=cf), labels(detected=True, identified=True)),
        (
            rgb("rgb-counterfactual", 0.0, "x", cf=cf),
            labels(rejected=True, detected=True, identified=True),
        ),
        (
            rgb("rgb-counterfactual", 0.0, "x", cf=cf),
            labels(matched=(False,), detected=True, identified=False),
        ),
        (
            rgb("rgb-counterfactual", 0.0, "x", cf=cf),
            labels(matched=(False,), detected=False, identified=True),
        ),
    ]
    totals = totals_of(record_values(r, lab, {}) for r, lab in rows)
    out = dataset_values(totals, {"rgb.variant": "reference"})
    assert out["rgb.error_detection_rate"] == 3 / 4  # factlabel
    assert out["rgb.error_correction_rate"] == 2 / 3  # evalue.py: the rejection counts
    assert out["rgb.fact_evalue.error_detection_rate"] == 3 / 4  # identified
    assert out["rgb.fact_evalue.accuracy"] == 1 / 4  # only the first is correct
    assert out["rgb.fact_evalue.error_correction_rate"] == 1 / 3  # identified and correct
    none = [(r, labels(detected=False, identified=False)) for r, _ in rows]
    out = dataset_values(totals_of(record_values(r, lab, {}) for r, lab in none), {})
    assert out["rgb.error_correction_rate"] == 0.0
    assert out["rgb.fact_evalue.error_correction_rate"] == 0.0


# -- ragas (explodinggradients/ragas: AspectCritic, MetricAnnotation) ----------------


def annotation(verdict_score=1):
    return parse_record(
        {
            "id": "1",
            "task": "ragas",
            "question": "q",
            "response": [["a", "r"]],
            "ragas_metric": "helpfulness",
            "scores": {"stored.helpfulness": verdict_score},
        }
    )


def test_aspect_critic_verdict_is_the_score_judge_and_reviewed():
    """ragas ``AspectCritic._compute_score``: with strictness 1 the score is the one
    response's ``verdict`` (1 pass, 0 fail; a majority vote over several otherwise);
    the annotation export keeps it as ``metric_output``. Judge and reviewed come from the verdict
    label; the stored score maps to the same name for the comparison."""
    record = annotation()
    assert record_metrics(record, {"verdict": {"*": True}}, {}) == {"ragas.verdict": 1.0}
    assert record_metrics(record, {"verdict": {"*": False}}, {}) == {"ragas.verdict": 0.0}
    assert record_metrics(record, {}, {}) == {"ragas.verdict": None}  # no binary verdict
    assert stored_pairs(record)["ragas.verdict"] == 1
    layers = [{"verdict": {"*": True}}, {"verdict": {"*": False}}, {}, {"verdict": {"*": True}}]
    totals = totals_of(record_values(record, lab, {}) for lab in layers)
    assert dataset_values(totals, {})["ragas.verdict"] == 2 / 3  # the undefined one is out
    assert undefined_counts(totals) == {"ragas.verdict": 1}


# -- undefined is None, counted and never averaged ------------------------------------


def test_undefined_values_are_counted_not_averaged():
    totals = totals_of(
        [{"x.m": 1.0}, {"x.m": None}, {"x.m": 0.0}, {"x.m": None}, {"x.only_none": None}]
    )
    out = dataset_values(totals, {})
    assert out["x.m"] == 0.5  # (1 + 0) / 2, not (1 + 0 + 0 + 0) / 4
    assert out["x.only_none"] is None  # present, undefined everywhere: null, not absent
    assert undefined_counts(totals) == {"x.m": 2, "x.only_none": 1}
