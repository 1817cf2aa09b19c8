"""MT-RAG (docs/metrics.md): text metrics against rouge_score, RB_agg, RB_llm, IDK conditioning."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from ragreview.core.metrics import record_metrics
from ragreview.core.metrics.mtrag import extractiveness, idk_conditioned, rb_llm, token_recall
from ragreview.core.metrics.rouge import rouge_l
from ragreview.core.record import parse_record

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "mtrag"
SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)

SAMPLES = [
    ("The cat sat on the mat.", "A cat was sitting on the mat!"),
    ("", "something"),
    ("only punctuation ?!", "...."),
    ("Café Zürich — naïve façade, 1999/2000", "cafe zurich naive facade 1999 2000"),
    ("İstanbul ŞEHİR", "istanbul sehir"),
    ("x " * 50, "x y " * 30),
    ("日本語のテキスト abc", "abc 日本"),
    ("tabs\tand\nnewlines", "tabs and newlines"),
]


def _random_texts(n: int) -> list[tuple[str, str]]:
    rng = random.Random(7)
    vocab = "the a an cat dog mat sat on in 1999 Paris, é ß don't x-ray U.S. ?! \n".split(" ")
    return [
        (
            " ".join(rng.choices(vocab, k=rng.randint(0, 30))),
            " ".join(rng.choices(vocab, k=rng.randint(0, 30))),
        )
        for _ in range(n)
    ]


@pytest.mark.parametrize("prediction, target", SAMPLES + _random_texts(300))
def test_rouge_l_equals_rouge_score(prediction, target):
    assert rouge_l(prediction, target) == SCORER.score(target, prediction)["rougeL"].fmeasure


def _fixture_rows():
    path = FIXTURES / "responses-10.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _as_record(row: dict) -> object:
    """The canonical record of an MT-RAG row (docs/formats.md/§7), with the source kept."""
    return parse_record(
        {
            "id": row["task_id"],
            "task": "mtrag",
            "response": [["a", row["predictions"][0]["text"]]],
            "references": [t["text"] for t in row["targets"]],
            "documents": [
                {"sentences": [[f"{i}a", c["text"]]]} for i, c in enumerate(row["contexts"])
            ],
            "answerability": row["answerability"][0],
            "source": {"format": "mtrag", "record": row},
        }
    )


@pytest.mark.skipif(not _fixture_rows(), reason="MT-RAG fixtures absent")
def test_fixture_text_metrics_follow_mtrag_rules():
    for row in _fixture_rows():
        record = _as_record(row)
        out = record_metrics(record, {}, {})
        prediction = row["predictions"][0]["text"]
        target = row["targets"][0]["text"]
        assert out["mtrag.rouge_l"] == SCORER.score(target, prediction)["rougeL"].fmeasure
        assert out["mtrag.length"] == len(prediction)
        assert out["mtrag.recall"] == token_recall(prediction, target)
        if row["contexts"]:
            assert out["mtrag.extractiveness"] == max(
                extractiveness(prediction, c["text"]) for c in row["contexts"]
            )
        else:
            assert out["mtrag.extractiveness"] is None
        # No BERTScore in these files: BertKPrec missing -> RB_agg 0 (MT-RAG's rb_agg).
        assert out["mtrag.rb_agg"] == 0.0
        # UNANSWERABLE rows: conditioned metrics follow only the IDK verdict.
        if row["answerability"][0] == "UNANSWERABLE":
            said_idk = record_metrics(record, {"idk": {"*": 1}}, {})
            assert said_idk["mtrag.rb_agg_idk"] == 1.0
            assert said_idk["mtrag.answerability_accuracy"] == 1.0


def test_token_recall_normalisation():
    # "The" dropped, punctuation stripped, multiset overlap / target tokens.
    assert token_recall("the Cat, the cat!", "a cat cat dog") == pytest.approx(2 / 3)
    assert token_recall("nothing", "in common") == 0
    assert token_recall("x", "") == 0  # no overlap -> 0 before dividing


def test_extractiveness():
    passage = "Line one.\nLine <b>two</b>!"
    assert extractiveness("Intro: line one line btwob and more", passage) == 1.0  # substring
    assert extractiveness("totally different words", passage) == rouge_l(
        "totally different words", "line one line btwob"
    )


def mt(scores=None, documents=1, references=("the cat sat on the mat",), text="the cat sat"):
    return parse_record(
        {
            "id": "m",
            "task": "mtrag",
            "response": [["a", text]],
            "references": list(references),
            "documents": [{"sentences": [[f"{i}a", "cats sit"]]} for i in range(documents)],
            "scores": scores or {},
        }
    )


def hmean(a, b, c):
    return 3 * a * b * c / (a * b + a * c + b * c)


def test_rb_agg_from_imported_bertscores():
    record = mt({"mtrag.bertscore_r": 0.4, "mtrag.bert_k_prec": 0.2})
    rouge = SCORER.score("the cat sat on the mat", "the cat sat")["rougeL"].fmeasure
    out = record_metrics(record, {}, {})
    assert out["mtrag.rb_agg"] == pytest.approx(hmean(0.7, rouge, 0.6))
    assert out["mtrag.bertscore_r"] == 0.4 and out["mtrag.bert_k_prec"] == 0.2


def test_rb_agg_missing_bertscore_r_falls_back_to_recall():
    record = mt({"mtrag.bert_k_prec": 0.2})
    out = record_metrics(record, {}, {})
    assert out["mtrag.rb_agg"] == pytest.approx(
        hmean(out["mtrag.recall"], out["mtrag.rouge_l"], 0.6)
    )


@pytest.mark.parametrize(
    "scores, documents",
    [
        ({"mtrag.bertscore_r": 0.4}, 1),  # no BertKPrec: third term 0
        ({"mtrag.bertscore_r": 0.4}, 0),  # no passages, no BertKPrec
        ({"mtrag.bertscore_r": -1.0, "mtrag.bert_k_prec": 0.2}, 1),  # (−1+1)/2 = 0
    ],
)
def test_rb_agg_zero_cases(scores, documents):
    assert record_metrics(mt(scores, documents), {}, {})["mtrag.rb_agg"] == 0.0


def test_rb_agg_null_bert_k_prec_counts_as_zero():
    record = mt({"mtrag.bertscore_r": 0.4, "mtrag.bert_k_prec": None})
    out = record_metrics(record, {}, {})
    assert out["mtrag.rb_agg"] == pytest.approx(hmean(0.7, out["mtrag.rouge_l"], 0.5))


def test_no_target_no_passages():
    out = record_metrics(mt(references=(), documents=0), {}, {})
    assert out["mtrag.recall"] is None and out["mtrag.rouge_l"] is None
    assert out["mtrag.extractiveness"] is None and out["mtrag.rb_agg"] is None


@pytest.mark.parametrize(
    "rating, expected",
    [(7, 0.7), (10, 1.0), (0, 0.0), (11, 1.1), (-3, -0.3), (None, 0.5), ("7", 0.5), (7.5, 0.75)],
)
def test_rb_llm_ratings_are_never_clamped(rating, expected):
    """follows mt-rag-benchmark scripts/evaluation/judge_wrapper.py get_idk_score, which
    reads metrics["RB_llm"][0] as stored: extract_rating's clamp was applied to the
    judge's text before that; a rating that is no number is its "no match" 0.5."""
    assert rb_llm(rating) == expected


def test_rb_llm_and_rl_f_sources():
    record = mt({"mtrag.rl_f": 0.25, "mtrag.rb_llm": 0.9})
    out = record_metrics(record, {}, {})
    assert out["mtrag.rb_llm"] == 0.9 and out["mtrag.rl_f"] == 0.25  # imported
    out = record_metrics(record, {"rb_llm_rating": {"*": 12}}, {})
    assert out["mtrag.rb_llm"] == 1.2  # a rating label wins, as it is
    with_statements = parse_record(
        {
            "id": "s",
            "task": "mtrag",
            "statements": [["s1", "x"], ["s2", "y"]],
            "scores": {"mtrag.rl_f": 0.25},
        }
    )
    out = record_metrics(with_statements, {"statement": {"s1": True}}, {})
    assert out["mtrag.rl_f"] == 0.5  # from the statements, not the imported value


@pytest.mark.parametrize(
    "answerability, idk, under, raw, expected",
    [
        ("UNANSWERABLE", 1, None, 0.3, 1.0),
        ("UNANSWERABLE", 0, None, 0.3, 0.0),
        ("UNANSWERABLE", 0.5, None, 0.3, 0.0),
        ("UNANSWERABLE", None, None, 0.3, 0.3),  # MT-RAG quirk: no verdict -> raw metric
        ("CONVERSATIONAL", 1, None, 0.3, 1.0),
        ("ANSWERABLE", 1, None, 0.3, 0.0),
        ("ANSWERABLE", 0.5, None, 0.3, 0.3),  # idk 0.5 keeps the metric
        ("ANSWERABLE", 0, None, None, None),  # raw NaN propagates
        ("PARTIAL", 1, None, 0.3, 0.0),
        ("PARTIAL", 0, None, 0.3, 0.3),
        ("UNDERSPECIFIED", 1, 1, 0.3, 1.0),
        ("UNDERSPECIFIED", 1, 0.5, 0.3, 0.0),
        # no underspecified verdict: the older get_idk_score, which keeps the raw metric
        ("UNDERSPECIFIED", 0, None, 0.3, 0.3),
        ("UNDERSPECIFIED", 1, None, 0.3, 0.0),
        ("UNDERSPECIFIED", 0, 0, 0.3, 0.0),
        (None, 1, None, 0.3, 0.0),
        (None, 0, None, 0.3, 0.3),
    ],
)
def test_idk_conditioning(answerability, idk, under, raw, expected):
    assert idk_conditioned(raw, answerability, idk, under) == expected


def test_reviewed_answerability_label_overrides_the_record():
    record = parse_record({"id": "u", "task": "mtrag", "answerability": "ANSWERABLE"})
    labels = {"idk": {"*": 1}, "answerability": {"*": "UNANSWERABLE"}, "rb_llm_rating": {"*": 3}}
    out = record_metrics(record, labels, {})
    assert out["mtrag.rb_llm_idk"] == 1.0 and out["mtrag.rb_llm"] == pytest.approx(0.3)
    assert out["mtrag.answerability_accuracy"] == 1.0
    out = record_metrics(record, {"idk": {"*": 1}, "rb_llm_rating": {"*": 3}}, {})
    assert out["mtrag.rb_llm_idk"] == 0.0 and out["mtrag.answerability_accuracy"] == 0.0


def test_rb_agg_uses_a_stored_bert_k_prec_on_a_turn_without_contexts():
    """follows mt-rag-benchmark scripts/evaluation/run_algorithmic.py rb_agg: "if
    'BertKPrec' not in row['metrics']: extractiveness = 0", else (max(BertKPrec)+1)/2,
    whether or not the turn has contexts. Files store BertKPrec [0.0] on such turns."""
    record = mt({"mtrag.bertscore_r": 0.6, "mtrag.bert_k_prec": 0.0}, documents=0, text=TARGET)
    out = record_metrics(record, {}, {})
    # recall (0.6+1)/2 = 0.8, rouge 1 (prediction = target), extractiveness (0+1)/2 = 0.5:
    # 3·0.8·1·0.5 / (0.8·1 + 0.8·0.5 + 1·0.5) = 1.2 / 1.7
    assert out["mtrag.rouge_l"] == 1.0
    assert out["mtrag.rb_agg"] == pytest.approx(1.2 / 1.7, abs=1e-15)
    no_key = mt({"mtrag.bertscore_r": 0.6}, documents=0, text=TARGET)
    assert record_metrics(no_key, {}, {})["mtrag.rb_agg"] == 0.0  # the key absent: 0


TARGET = "the cat sat on the mat"


def test_both_rules_reach_the_idk_values_after_an_answerability_override():
    """follows mt-rag-benchmark scripts/evaluation/judge_wrapper.py get_idk_score: an
    ANSWERABLE turn with idk_eval 0 keeps the raw RB_agg / RB_llm, here the stored
    BertKPrec's RB_agg and the stored RB_llm 0 (a rating of 0), neither forced."""
    record = parse_record(
        {
            "id": "u",
            "task": "mtrag",
            "answerability": "UNANSWERABLE",
            "response": [["a", TARGET]],
            "references": [TARGET],
            "scores": {"mtrag.bertscore_r": 0.6, "mtrag.bert_k_prec": 0.0},
        }
    )
    judge = {"idk": {"*": 0}, "rb_llm_rating": {"*": 0.0}}
    out = record_metrics(record, judge, {})
    assert out["mtrag.rb_agg_idk"] == 0.0 and out["mtrag.rb_llm_idk"] == 0.0  # unanswerable
    reviewed = {**judge, "answerability": {"*": "ANSWERABLE"}}
    out = record_metrics(record, reviewed, {})
    assert out["mtrag.rb_agg_idk"] == pytest.approx(1.2 / 1.7, abs=1e-15)
    assert out["mtrag.rb_llm_idk"] == 0.0  # RB_llm 0 stays 0 (was 0.5)


def test_with_source_is_the_record_with_the_source_in_its_data() -> None:
    """``with_source`` copies the record rather than calling dataclasses.replace
    (issue 27): the same fields, the source added to ``data``, the record unchanged."""
    import dataclasses

    from ragreview.core.metrics import with_source
    from ragreview.core.record import Record

    record = Record("t1", task="mtrag", question="q", references=("r",), data={"task": "mtrag"})
    row = {"task_id": "t1", "predictions": [{"text": "p"}]}
    seen = with_source(record, row)
    expected = dataclasses.replace(
        record, data={"task": "mtrag", "source": {"format": "mtrag", "record": row}}
    )
    assert type(seen) is Record and seen is not record
    assert [getattr(seen, f.name) for f in dataclasses.fields(Record)] == [
        getattr(expected, f.name) for f in dataclasses.fields(Record)
    ]
    assert record.data == {"task": "mtrag"}
    assert not hasattr(Record, "__post_init__")  # (which a copy would not run)
