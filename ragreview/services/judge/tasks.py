"""Judge tasks: the prompt for a record, and the model's JSON turned into a label layer.

Every task validates strictly: keys must exist on the record, booleans must be
booleans, every item that the metrics count (response sentence, fact) must get exactly
one verdict. Invalid output raises ``OutputError``; the runner retries, then records it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ...core import families
from ...core.labels import FACT_LABELS, SUPPORT_TOKENS
from ...core.record import Record, resolve_target

Layer = dict[str, dict[str, Any]]


class OutputError(ValueError):
    """The model's output is not the JSON the task asked for."""


@dataclass(frozen=True)
class Parsed:
    layer: Layer
    facts: list[list[Any]] | None = None  # new atomic facts when the judge split them


@dataclass(frozen=True)
class Task:
    name: str
    produces: tuple[str, ...]  # label names the task (re)writes in the judge layer
    needs: Callable[[Record], str | None]  # why a record cannot be judged, or None
    parse: Callable[[Record, Any], Parsed]

    def names(self, record: Record) -> tuple[str, ...]:
        if self.name == "rgb" and not _counterfactual(record):
            return ("rejected",)
        return self.produces


# -- rendering ----------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{(documents|question|conversation|response|response_text|facts)\}")


def default_template(task: str) -> str:
    return resources.files(__package__).joinpath("prompts", f"{task}.txt").read_text("utf-8")


def _question(record: Record) -> str:
    if record.question:
        return record.question
    users = [t.text for t in record.conversation if t.speaker.lower() == "user"]
    return users[-1] if users else ""


def fields(record: Record) -> dict[str, str]:
    docs = []
    for i, doc in enumerate(record.documents):
        head = f"Document {i}" + (f" ({doc.title})" if doc.title else "") + ":"
        docs.append("\n".join([head, *(f"{k}. {t}" for k, t in doc.sentences)]))
    turns = [f"{t.speaker}: {t.text}" for t in record.conversation]
    if not turns and record.question:
        turns = [f"user: {record.question}"]
    return {
        "documents": "\n\n".join(docs) or "(no documents were given)",
        "question": _question(record),
        "conversation": "\n".join(turns),
        "response": "\n".join(f"{k}. {t}" for k, t in record.response),
        "response_text": record.response_text,
        "facts": "\n".join(f"{f.key}. {f.text}" for f in record.facts),
    }


def render(template: str, record: Record) -> str:
    """Fill ``{documents}``, ``{question}``… Other braces (JSON schemas) stay as written."""
    values = fields(record)
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


# -- parsing helpers ----------------------------------------------------------------


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object in a reply, tolerating ```json fences and chatter around it."""
    body = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.S)
    if fence and not body.startswith("{"):
        body = fence.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise OutputError("the reply holds no JSON object")
    try:
        obj = json.loads(body[start : end + 1])
    except ValueError as err:
        raise OutputError(f"the reply is not valid JSON ({err})") from None
    except RecursionError:  # {"a": [[[[… nested deeper than the parser goes
        raise OutputError("the reply's JSON is nested too deeply") from None
    if not isinstance(obj, dict):
        raise OutputError("the reply is not a JSON object")
    return obj


def _field(obj: dict[str, Any], name: str, kind: type | tuple[type, ...], what: str) -> Any:
    if name not in obj:
        raise OutputError(f"missing field {name!r}")
    value = obj[name]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise OutputError(f"{name} must be {what}, got {json.dumps(value)[:60]}")
    return value


def _bool(obj: dict[str, Any], name: str) -> bool:
    return bool(_field(obj, name, bool, "true or false"))


def _doc_keys(record: Record, keys: Any, where: str, tokens: bool) -> list[str]:
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise OutputError(f"{where} must be a list of sentence keys")
    out: list[str] = []
    for key in keys:
        token = key.strip().rstrip(".")
        if token in SUPPORT_TOKENS:
            if tokens:
                out.append(token)
            continue  # a special token names no sentence, so it marks none relevant
        resolved = resolve_target(record, "doc", key)
        if resolved is None:
            raise OutputError(f"{where}: the record has no document sentence {key!r}")
        if resolved not in out:
            out.append(resolved)
    return out


# -- the tasks ----------------------------------------------------------------------


def _parse_trace(record: Record, obj: Any) -> Parsed:
    relevant = _doc_keys(
        record, obj.get("all_relevant_sentence_keys"), "all_relevant_sentence_keys", False
    )
    utilized = _doc_keys(
        record, obj.get("all_utilized_sentence_keys"), "all_utilized_sentence_keys", False
    )
    _bool(obj, "overall_supported")
    infos = _field(obj, "sentence_support_information", list, "a list")
    supported: dict[str, Any] = {}
    support_keys: dict[str, Any] = {}
    for i, info in enumerate(infos):
        where = f"sentence_support_information[{i}]"
        if not isinstance(info, dict):
            raise OutputError(f"{where} must be an object")
        key = _field(info, "response_sentence_key", str, "a response sentence key")
        resolved = resolve_target(record, "response", key)
        if resolved is None:
            raise OutputError(f"{where}: the record has no response sentence {key!r}")
        if resolved in supported:
            raise OutputError(f"{where}: response sentence {resolved!r} is judged twice")
        keys = _doc_keys(
            record, info.get("supporting_sentence_keys"), f"{where}.supporting_sentence_keys", True
        )
        fully = _bool(info, "fully_supported")
        if fully and not keys:
            raise OutputError(f"{where}: fully_supported is true but no supporting keys are given")
        supported[resolved] = fully
        support_keys[resolved] = keys
    missing = [k for k, _ in record.response if k not in supported]
    if missing:
        raise OutputError(f"no support verdict for response sentence(s) {', '.join(missing)}")
    layer: Layer = {
        "relevant": {k: True for k in relevant},
        "utilized": {k: True for k in utilized},
        "supported": supported,
        "support_keys": support_keys,
    }
    return Parsed({name: targets for name, targets in layer.items() if targets})


IDK_VALUES = {"yes": 1, "no": 0, "partial": 0.5}


def _parse_idk(record: Record, obj: Any) -> Parsed:
    value = obj.get("idk")
    if isinstance(value, str) and value.strip().lower() in IDK_VALUES:
        return Parsed({"idk": {"*": IDK_VALUES[value.strip().lower()]}})
    if not isinstance(value, bool) and value in (0, 0.5, 1):
        return Parsed({"idk": {"*": 0.5 if value == 0.5 else int(value)}})
    raise OutputError(f'idk must be "yes", "no" or "partial", got {json.dumps(value)}')


def _counterfactual(record: Record) -> bool:
    return bool(record.counterfactual) or (record.task or "") == "rgb-counterfactual"


def _parse_rgb(record: Record, obj: Any) -> Parsed:
    layer: Layer = {"rejected": {"*": _bool(obj, "rejected")}}
    if _counterfactual(record):
        layer["error_detected"] = {"*": _bool(obj, "error_detected")}
    return Parsed(layer)


def _fact_label(item: dict[str, Any], where: str) -> str:
    label = item.get("label")
    if isinstance(label, str) and label.strip().upper() in FACT_LABELS:
        return label.strip().upper()
    raise OutputError(f'{where}.label must be "S", "NS" or "IR", got {json.dumps(label)}')


def _parse_facts(record: Record, obj: Any) -> Parsed:
    items = _field(obj, "facts", list, "a list")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise OutputError(f"facts[{i}] must be an object")
    if record.facts:  # rate the record's own facts: exactly one verdict each
        labels: dict[str, str] = {}
        for i, item in enumerate(items):
            key = item.get("key")
            resolved = resolve_target(record, "fact", key) if isinstance(key, str) else None
            if resolved is None:
                raise OutputError(f"facts[{i}]: the record has no fact {json.dumps(key)}")
            if resolved in labels:
                raise OutputError(f"facts[{i}]: fact {resolved!r} is rated twice")
            labels[resolved] = _fact_label(item, f"facts[{i}]")
        missing = [f.key for f in record.facts if f.key not in labels]
        if missing:
            raise OutputError(f"no rating for fact(s) {', '.join(missing)}")
        return Parsed({"fact": labels})
    facts: list[list[Any]] = []
    labels = {}
    for i, item in enumerate(items):
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            raise OutputError(f"facts[{i}].text must be a non-empty string")
        sentence = item.get("sentence")
        if sentence is not None:
            sentence = (
                resolve_target(record, "response", sentence) if isinstance(sentence, str) else None
            )
            if sentence is None:
                raise OutputError(
                    f"facts[{i}].sentence: the record has no response sentence "
                    f"{json.dumps(item.get('sentence'))}"
                )
        key = f"f{i + 1}"
        facts.append([key, text.strip(), sentence])
        labels[key] = _fact_label(item, f"facts[{i}]")
    return Parsed({"fact": labels} if labels else {}, facts=facts)


def _needs_response(record: Record) -> str | None:
    return None if record.response else "no response"


def _needs_trace(record: Record) -> str | None:
    if not record.doc_sentences:
        return "no document sentences"
    return _needs_response(record)


def _needs_facts(record: Record) -> str | None:
    return None if (record.response or record.facts) else "no response and no facts"


TASKS: dict[str, Task] = {
    "trace": Task(
        "trace", ("relevant", "utilized", "supported", "support_keys"), _needs_trace, _parse_trace
    ),
    "idk": Task("idk", ("idk",), _needs_response, _parse_idk),
    "rgb": Task("rgb", ("rejected", "error_detected"), _needs_response, _parse_rgb),
    "facts": Task("facts", ("fact",), _needs_facts, _parse_facts),
}


def task_for(record: Record, requested: str) -> Task | None:
    """The task to run on ``record``; ``auto``: the one its family declares
    (``Family.judge_task``), None when it declares none."""
    if requested != "auto":
        return TASKS[requested]
    family = families.task_family(record.task)
    name = family.judge_task if family is not None else None
    return TASKS[name] if name else None


def parse(task: Task, record: Record, text: str) -> Parsed:
    return task.parse(record, extract_json(text))


# -- log-probabilities of the verdicts ----------------------------------------------

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_LITERAL = re.compile(r"[^,}\]\s]+")


def _object_span(text: str) -> tuple[int, int]:
    """Where ``extract_json`` finds the reply's JSON object, as offsets in ``text``."""
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    base, seg = (
        (fence.start(1), fence.group(1))
        if fence and not text.strip().startswith("{")
        else (0, text)
    )
    return base + seg.find("{"), base + seg.rfind("}") + 1


def _verdict_fields(
    task: Task, record: Record, obj: dict[str, Any]
) -> list[tuple[str, tuple[str, str]]]:
    """(JSON field, label item) of each verdict in the reply, in the reply's order."""
    if task.name == "idk":
        return [("idk", ("idk", "*"))]
    if task.name == "rgb":
        out = [("rejected", ("rejected", "*"))]
        return out + (
            [("error_detected", ("error_detected", "*"))] if _counterfactual(record) else []
        )
    if task.name == "trace":
        return [
            (
                "fully_supported",
                ("supported", resolve_target(record, "response", i["response_sentence_key"]) or ""),
            )
            for i in obj["sentence_support_information"]
        ]
    if record.facts:
        keys = [resolve_target(record, "fact", item["key"]) or "" for item in obj["facts"]]
    else:
        keys = [f"f{i + 1}" for i in range(len(obj["facts"]))]
    return [("label", ("fact", key)) for key in keys]


def verdict_logprobs(
    task: Task, record: Record, text: str, tokens: list[tuple[str, float]]
) -> dict[tuple[str, str], float]:
    """The log-probability of each verdict in a reply the task parsed: the sum over the
    tokens that spell the verdict's value (``true``, ``"yes"`` without its quotes,
    ``"NS"``…). Labels that are lists of keys (relevant, utilized, support_keys) have
    no single verdict and get none. Empty when the tokens do not spell the reply or a
    verdict cannot be placed unambiguously."""
    if "".join(t for t, _ in tokens) != text:
        return {}
    start, end = _object_span(text)
    try:
        fields = _verdict_fields(task, record, json.loads(text[start:end]))
    except (KeyError, TypeError, ValueError, RecursionError):
        return {}
    spans: dict[tuple[str, str], tuple[int, int]] = {}
    for field in dict.fromkeys(f for f, _ in fields):
        items = [item for f, item in fields if f == field]
        found = list(re.finditer(rf'"{field}"\s*:\s*', text[start:end]))
        if len(found) != len(items):
            continue  # the field also appears elsewhere: do not guess
        for match, item in zip(found, items):
            at = start + match.end()
            value = _STRING.match(text, at) or _LITERAL.match(text, at)
            if value is None:
                continue
            a, b = value.span()
            if text[a] == '"':
                a, b = a + 1, b - 1
            spans[item] = (a, b)
    out: dict[tuple[str, str], float] = {}
    offset = 0
    bounds = []
    for token, logprob in tokens:
        bounds.append((offset, offset + len(token), logprob))
        offset += len(token)
    for item, (a, b) in spans.items():
        hit = [lp for t0, t1, lp in bounds if t0 < b and t1 > a]
        if hit:
            out[item] = math.fsum(hit)
    return out
