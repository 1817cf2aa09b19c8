"""Prompts and output validation of the judge tasks (no server needed)."""

from __future__ import annotations

import json

import pytest

from ragreview.core.record import parse_record
from ragreview.services.judge.tasks import (
    TASKS,
    OutputError,
    default_template,
    extract_json,
    parse,
    render,
    task_for,
)

TRACE = parse_record(
    {
        "id": "t",
        "task": "trace",
        "question": "Why {braces}?",
        "documents": [
            {"title": "T", "sentences": [["0a", "Alpha."], ["0b", "Beta."]]},
            {"sentences": [["1a", "Gamma."]]},
        ],
        "response": [["a", "One."], ["b", "Two."]],
    }
)


def trace_reply(**changes) -> dict:
    reply = {
        "relevance_explanation": "x",
        "all_relevant_sentence_keys": ["0a.", "1a"],
        "overall_supported_explanation": "x",
        "overall_supported": False,
        "sentence_support_information": [
            {
                "response_sentence_key": "a.",
                "explanation": "x",
                "supporting_sentence_keys": ["0a", "numerical_reasoning"],
                "fully_supported": True,
            },
            {
                "response_sentence_key": "b",
                "explanation": "x",
                "supporting_sentence_keys": [],
                "fully_supported": False,
            },
        ],
        "all_utilized_sentence_keys": ["0a", "general"],
    }
    reply.update(changes)
    return reply


def run_trace(reply: dict):
    return parse(TASKS["trace"], TRACE, json.dumps(reply))


def test_every_prompt_ships_with_the_package():
    for name in TASKS:
        assert "{response" in default_template(name) or name == "facts"
    assert "{facts}" in default_template("facts")


def test_render_fills_fields_and_keeps_schema_braces():
    prompt = render(default_template("trace"), TRACE)
    assert "Document 0 (T):\n0a. Alpha.\n0b. Beta.\n\nDocument 1:\n1a. Gamma." in prompt
    assert "a. One.\nb. Two." in prompt
    assert "Why {braces}?" in prompt  # record text is never treated as a placeholder
    assert '"overall_supported": boolean' in prompt


def test_trace_reply_becomes_the_judge_layer():
    parsed = run_trace(trace_reply())
    assert parsed.layer == {
        "relevant": {"0a": True, "1a": True},
        "utilized": {"0a": True},  # a special token marks no sentence as utilized
        "supported": {"a": True, "b": False},
        "support_keys": {"a": ["0a", "numerical_reasoning"], "b": []},
    }


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"all_relevant_sentence_keys": ["0z"]}, "no document sentence '0z'"),
        ({"all_utilized_sentence_keys": "0a"}, "must be a list of sentence keys"),
        ({"overall_supported": "yes"}, "overall_supported must be true or false"),
        ({"sentence_support_information": {}}, "must be a list"),
    ],
)
def test_trace_reply_errors(changes, message):
    with pytest.raises(OutputError, match=message):
        run_trace(trace_reply(**changes))


def _info(reply: dict, i: int, **changes) -> dict:
    reply["sentence_support_information"][i].update(changes)
    return reply


@pytest.mark.parametrize(
    "i, changes, message",
    [
        (0, {"fully_supported": 1}, "fully_supported must be true or false"),
        (0, {"response_sentence_key": "c"}, "no response sentence 'c'"),
        (0, {"response_sentence_key": "b"}, "'b' is judged twice"),
        (1, {"fully_supported": True}, "fully_supported is true but no supporting keys"),
        (1, {"supporting_sentence_keys": ["9x"]}, "no document sentence '9x'"),
    ],
)
def test_trace_support_errors(i, changes, message):
    with pytest.raises(OutputError, match=message):
        run_trace(_info(trace_reply(), i, **changes))


def test_trace_needs_a_verdict_for_every_response_sentence():
    reply = trace_reply()
    reply["sentence_support_information"].pop()
    with pytest.raises(OutputError, match="no support verdict for response sentence"):
        run_trace(reply)


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"idk": "Partial"}\n```',
        'Here you go: {"idk": "partial"} hope it helps',
        '{"idk": 0.5}',
    ],
)
def test_extract_json_and_idk(text):
    record = parse_record({"id": "m", "task": "mtrag", "response": [["a", "I don't know."]]})
    assert parse(TASKS["idk"], record, text).layer == {"idk": {"*": 0.5}}


@pytest.mark.parametrize("text", ["no json here", "{broken", "[1, 2]", '{"idk": "maybe"}'])
def test_idk_rejects_bad_replies(text):
    record = parse_record({"id": "m", "response": [["a", "x"]]})
    with pytest.raises(OutputError):
        parse(TASKS["idk"], record, text)


def test_extract_json_requires_one_object():
    with pytest.raises(OutputError, match="not valid JSON"):
        extract_json('{"a": 1} and {"b": 2}')  # spans both: not one object


def test_rgb_error_detection_only_for_counterfactual_records():
    noise = parse_record({"id": "r", "task": "rgb-noise", "response": [["a", "x"]]})
    fact = parse_record({"id": "f", "task": "rgb-counterfactual", "response": [["a", "x"]]})
    reply = '{"rejected": false, "error_detected": true}'
    assert parse(TASKS["rgb"], noise, reply).layer == {"rejected": {"*": False}}
    assert parse(TASKS["rgb"], fact, reply).layer == {
        "rejected": {"*": False},
        "error_detected": {"*": True},
    }
    assert TASKS["rgb"].names(noise) == ("rejected",)
    with pytest.raises(OutputError, match="error_detected must be true or false"):
        parse(TASKS["rgb"], fact, '{"rejected": false, "error_detected": "no"}')


def test_facts_rates_the_records_own_facts():
    record = parse_record(
        {
            "id": "b",
            "response": [["a", "x"]],
            "facts": [["f1", "one", "a"], ["f2", "two", None]],
        }
    )
    reply = {"facts": [{"key": "f2", "label": "ir"}, {"key": "f1", "label": "S"}]}
    parsed = parse(TASKS["facts"], record, json.dumps(reply))
    assert parsed.layer == {"fact": {"f2": "IR", "f1": "S"}} and parsed.facts is None
    with pytest.raises(OutputError, match="no rating for fact"):
        parse(TASKS["facts"], record, json.dumps({"facts": reply["facts"][:1]}))
    with pytest.raises(OutputError, match="no fact"):
        parse(TASKS["facts"], record, '{"facts": [{"key": "f9", "label": "S"}]}')
    with pytest.raises(OutputError, match='label must be "S", "NS" or "IR"'):
        parse(TASKS["facts"], record, '{"facts": [{"key": "f1", "label": "maybe"}]}')


def test_facts_splits_a_response_without_facts():
    record = parse_record({"id": "b", "response": [["a", "x"], ["b", "y"]]})
    reply = {
        "facts": [
            {"key": None, "text": " Born 1815. ", "sentence": "a", "label": "S"},
            {"key": None, "text": "Wrote code.", "sentence": None, "label": "NS"},
        ]
    }
    parsed = parse(TASKS["facts"], record, json.dumps(reply))
    assert parsed.facts == [["f1", "Born 1815.", "a"], ["f2", "Wrote code.", None]]
    assert parsed.layer == {"fact": {"f1": "S", "f2": "NS"}}
    reply["facts"][0]["sentence"] = "z"
    with pytest.raises(OutputError, match="no response sentence"):
        parse(TASKS["facts"], record, json.dumps(reply))


def test_auto_task_follows_the_records_task():
    def kind(task):
        found = task_for(parse_record({"id": "x", "task": task}), "auto")
        return found.name if found else None

    assert [kind(t) for t in ("trace", "rgb-integration", "mtrag", "longform", "ragas")] == [
        "trace",
        "rgb",
        "idk",
        "facts",
        None,
    ]
    assert TASKS["trace"].needs(parse_record({"id": "x", "response": [["a", "x"]]}))


def test_a_record_without_documents_says_so():
    record = parse_record({"id": "b", "task": "longform", "response": [["a", "x"]]})
    prompt = render(default_template("facts"), record)
    assert "```\n(no documents were given)\n```" in prompt
    assert "rate\neach fact against well-established knowledge" in prompt


def test_verdict_logprobs_sum_the_tokens_that_spell_each_verdict():
    from ragreview.services.judge.tasks import TASKS, verdict_logprobs

    from .judge_server import token_logprobs

    def tokens(text):
        return [(t["token"], t["logprob"]) for t in token_logprobs(text)["content"]]

    record = parse_record({"id": "m", "task": "mtrag", "response": [["a", "I don't know."]]})
    reply = 'Here: {"explanation": "the \\"idk\\": no", "idk": "yes"}'
    # the value "yes" is one token (-0.75); the quoted "idk" in the explanation is not a key
    assert verdict_logprobs(TASKS["idk"], record, reply, tokens(reply)) == {("idk", "*"): -0.75}
    twice = '{"idk": "no", "idk": "yes"}'  # which one counts is ambiguous: none is stored
    assert verdict_logprobs(TASKS["idk"], record, twice, tokens(twice)) == {}
    # tokens that do not spell the reply (a server that dropped some): nothing is stored
    assert verdict_logprobs(TASKS["idk"], record, reply, tokens(reply)[:-2]) == {}
