"""parse_record (docs/formats.md): validation errors name the offending field."""

from __future__ import annotations

import json

import pytest

from ragreview.core.errors import InputError, RecordError
from ragreview.core.record import Document, Record, parse_record, resolve_target

FULL = {
    "id": "covidqa-17",
    "task": "trace",
    "question": "What causes prolonged inflammation?",
    "conversation": [{"speaker": "user", "text": "hi"}, {"speaker": "agent", "text": "hello"}],
    "documents": [
        {"id": "doc-9", "title": "T", "sentences": [["0a", "One."], ["0b", "Two."]]},
        {"sentences": [["1a", "Three."]]},
    ],
    "response": [["a", "Answer one."], ["b", "Answer two."]],
    "references": ["gold"],
    "answer_parts": [["Tampa, Florida", "Tampa"], ["2021"]],
    "counterfactual": ["Glendale"],
    "noise_rate": 0.4,
    "answerability": "ANSWERABLE",
    "facts": [["f1", "A fact.", "a"], ["f2", "Another."]],
    "statements": [["s1", "S one"]],
    "reference_statements": [["r1", "R one"]],
    "scores": {"mtrag.bertscore_r": 0.71, "stored.x": float("nan"), "stored.y": None},
    "labels": {"judge": {"relevant": {"0a": True}}},
    "extra_field": {"kept": [1, 2]},
}


def test_full_record_parses() -> None:
    rec = parse_record(FULL)
    assert rec.id == "covidqa-17" and rec.task == "trace"
    assert rec.doc_sentences == (("0a", "One."), ("0b", "Two."), ("1a", "Three."))
    assert rec.documents[0].id == "doc-9" and rec.documents[1].title is None
    assert rec.response_text == "Answer one. Answer two."
    assert rec.answer_parts == (("Tampa, Florida", "Tampa"), ("2021",))
    assert rec.facts[1].sentence is None and rec.facts[0].sentence == "a"
    assert rec.noise_rate == 0.4
    assert rec.scores == {"mtrag.bertscore_r": 0.71, "stored.x": None, "stored.y": None}
    # data keeps everything but labels, including unknown fields
    assert "labels" not in rec.data and rec.data["extra_field"] == {"kept": [1, 2]}
    assert rec.targets("doc") == ("0a", "0b", "1a")
    assert rec.targets("record") == ("*",)
    assert rec.targets("part") == ("p0", "p1")
    assert rec.targets("context") == ("c0", "c1")
    assert rec.targets("fact") == ("f1", "f2")
    assert rec.targets("statement") == ("s1",)
    assert rec.targets("reference_statement") == ("r1",)


def test_only_id_is_required_and_integer_ids_become_strings() -> None:
    assert parse_record({"id": 17}) == Record(id="17")


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        ([1, 2], ""),
        ({}, "id"),
        ({"id": None}, "id"),
        ({"id": True}, "id"),
        ({"id": [1]}, "id"),
        ({"id": "x", "task": 3}, "task"),
        ({"id": "x", "question": ["q"]}, "question"),
        ({"id": "x", "conversation": {}}, "conversation"),
        ({"id": "x", "conversation": ["hi"]}, "conversation[0]"),
        ({"id": "x", "conversation": [{"text": 5}]}, "conversation[0].text"),
        ({"id": "x", "documents": "text"}, "documents"),
        ({"id": "x", "documents": [3]}, "documents[0]"),
        ({"id": "x", "documents": [{"sentences": [["0a"]]}]}, "documents[0].sentences[0]"),
        ({"id": "x", "documents": [{"sentences": [["0a", 5]]}]}, "documents[0].sentences[0][1]"),
        ({"id": "x", "documents": [{"sentences": [[0, "t"]]}]}, "documents[0].sentences[0][0]"),
        (
            {"id": "x", "documents": [{"sentences": [["0a", "t"], ["0a", "u"]]}]},
            "documents[0].sentences[1]",
        ),
        (
            {"id": "x", "documents": [{"sentences": [["0a", "t"]]}, {"sentences": [["0a", "u"]]}]},
            "documents[1].sentences",
        ),
        ({"id": "x", "documents": [{"sentences": [], "title": 1}]}, "documents[0].title"),
        # (all documents' sentences are checked as one list first: each case names the
        # same field as a check of one document after another)
        ({"id": "x", "documents": [{"sentences": [["0a", "t"]]}, 3]}, "documents[1]"),
        (
            {"id": "x", "documents": [{"sentences": [["0a", "t"]]}, {"sentences": "0b"}]},
            "documents[1].sentences",
        ),
        (
            {"id": "x", "documents": [{"sentences": [["0a", "t"]]}, {"sentences": [["0b", 1]]}]},
            "documents[1].sentences[0][1]",
        ),
        (
            {
                "id": "x",
                "documents": [
                    {"sentences": [["0a", "t"]]},
                    {"sentences": [["0b", "u"]], "title": 2},
                ],
            },
            "documents[1].title",
        ),
        ({"id": "x", "response": "raw text"}, "response"),
        ({"id": "x", "response": [["a", None]]}, "response[0][1]"),
        ({"id": "x", "references": "gold"}, "references"),
        ({"id": "x", "references": [1]}, "references[0]"),
        ({"id": "x", "answer_parts": [[1]]}, "answer_parts[0][0]"),
        ({"id": "x", "answer_parts": ["Tampa"]}, "answer_parts[0]"),
        ({"id": "x", "counterfactual": [None]}, "counterfactual[0]"),
        ({"id": "x", "noise_rate": "0.4"}, "noise_rate"),
        ({"id": "x", "noise_rate": True}, "noise_rate"),
        ({"id": "x", "answerability": ["ANSWERABLE"]}, "answerability"),
        ({"id": "x", "facts": [["f1"]]}, "facts[0]"),
        ({"id": "x", "facts": [["f1", "t"], ["f1", "u"]]}, "facts"),
        ({"id": "x", "facts": [["f1", "t", 3]]}, "facts[0][2]"),
        ({"id": "x", "statements": [["s1", 1]]}, "statements[0][1]"),
        ({"id": "x", "reference_statements": {}}, "reference_statements"),
        ({"id": "x", "scores": []}, "scores"),
        ({"id": "x", "scores": {"a": "high"}}, "scores.a"),
    ],
)
def test_invalid_records_name_the_field(obj: object, field: str) -> None:
    with pytest.raises(RecordError) as info:
        parse_record(obj)
    assert info.value.field == field
    assert info.value.message
    assert str(info.value).startswith(f"{field}: " if field else info.value.message)


def test_each_document_keeps_its_own_sentences() -> None:
    rec = parse_record(
        {
            "id": "x",
            "documents": [
                {"sentences": [["0a", "A."], ["0b", "B."]], "id": 7},
                {"sentences": []},
                {"sentences": None, "title": "T"},
                {"sentences": [["3a", "C."]]},
            ],
        }
    )
    assert [d.sentences for d in rec.documents] == [
        (("0a", "A."), ("0b", "B.")),
        (),
        (),
        (("3a", "C."),),
    ]
    assert [(d.id, d.title) for d in rec.documents] == [
        ("7", None),
        (None, None),
        (None, "T"),
        (None, None),
    ]


def test_sentence_text_is_each_keys_last_sentence_and_chars_its_texts() -> None:
    # (the parser refuses a repeated key; a record built in code may hold one)
    rec = Record(
        "x", documents=(Document((("0a", "A."), ("0b", "Bee."))), Document((("0a", "Again."),)))
    )
    assert rec.sentence_text == {"0a": "Again.", "0b": "Bee."}
    assert rec.sentence_chars == len("Again.Bee.")
    assert parse_record({"id": "y"}).sentence_text == {}


def test_resolve_target_accepts_trailing_dot() -> None:
    rec = parse_record(FULL)
    assert resolve_target(rec, "doc", "0a") == "0a"
    assert resolve_target(rec, "doc", "0a.") == "0a"
    assert resolve_target(rec, "doc", "9z") is None
    assert resolve_target(rec, "response", "0a") is None


def test_keys_with_dots_from_the_input_are_kept_verbatim() -> None:
    rec = parse_record({"id": "x", "documents": [{"sentences": [["0a.", "t"], ["0b", "u"]]}]})
    assert rec.targets("doc") == ("0a.", "0b")
    assert resolve_target(rec, "doc", "0a.") == "0a."


def test_input_error_message_names_file_line_and_field() -> None:
    err = InputError("data.jsonl", 7, "documents[0]", "expected an object")
    assert str(err) == "data.jsonl:7: documents[0]: expected an object"
    assert str(InputError("data.jsonl", None, None, "file is empty")) == "data.jsonl: file is empty"


def test_record_data_is_json_equal_to_input_without_labels() -> None:
    obj = json.loads(json.dumps({k: v for k, v in FULL.items() if k != "scores"}))
    rec = parse_record(obj)
    assert dict(rec.data) == {k: v for k, v in obj.items() if k != "labels"}
