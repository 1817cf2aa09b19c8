"""Corrections as the inputs of other judge-alignment loops (docs/align.md, Feeding
other loops): ``export --as ragas-annotation | mlflow-assessments | fewshot``.

Each writes the corrections (the items ``export --as disagreements`` lists: where the
reviewer's value differs from the judge's) in the target tool's own field names:

- ``ragas-annotation``: one ``MetricAnnotation`` JSON document for ragas'
  ``metric.train`` (``{metric: [SampleAnnotation]}``; ``ragas.dataset_schema``), which
  ragreview's own reader (formats/ragas_annotations.py) imports again; a correction's
  guideline rule is a line of the edited output's ``reason`` (no field of its own);
- ``mlflow-assessments``: one MLflow ``Assessment`` per line, in its JSON form
  (``mlflow/protos/assessments.proto``: ``assessment_name``, ``source``, ``feedback``,
  ``rationale``, ``metadata``, …), a human's feedback named after the judge's label;
- ``fewshot``: generic JSON Lines: ``input``, ``judge_output``, ``corrected_output``,
  ``reason``, ``rule``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from ..core import label_items
from ..core.guidelines import rule_line
from ..core.labels import CATALOGUE
from ..formats import catalogue
from . import disagreements

if TYPE_CHECKING:
    import sqlite_utils

RAGAS, MLFLOW, FEWSHOT = catalogue.LOOP_TARGETS  # (the names: formats/catalogue.py)
PROMPT_NAME = "ragreview_judge_prompt"  # the one prompt a ragreview sample records


def _verdict(name: str, value: Any) -> int:
    """ragas' 0/1 verdict: the label's binary view (docs/agreement.md)."""
    if name not in CATALOGUE:
        return int(bool(value))
    return int(label_items.binary(name, value))


def _contexts(item: dict[str, Any]) -> list[str]:
    return [" ".join(text for _, text in doc["sentences"]) for doc in item["context"]["documents"]]


def ragas_sample(item: dict[str, Any]) -> dict[str, Any]:
    """A ``SampleAnnotation``: metric_input (ragas' v2 sample columns), metric_output
    (the judge's 0/1), prompts (one ``PromptAnnotation`` with the judge's output and
    the reviewer's ``edited_output``), is_accepted and target (the reviewer's 0/1)."""
    name = item["label"]
    judge, human = _verdict(name, item["judge"]["value"]), _verdict(name, item["human"]["value"])
    accepted = judge == human
    metric_input = {
        "user_input": item["context"]["question"] or "",
        "retrieved_contexts": _contexts(item),
        "response": item["context"]["response"],
    }
    prompt_input = {**metric_input, "label": name, "target": item["target"], "item": item["item"]}
    prompt_output = {
        "verdict": judge,
        "value": item["judge"]["value"],
        "reason": item["judge"]["reason"],
    }
    edited = {
        "verdict": human,
        "value": item["human"]["value"],
        "reason": reason_with_rule(item["human"]["reason"], item.get("rule")),
    }
    return {
        "metric_input": metric_input,
        "metric_output": float(judge),
        "prompts": {
            PROMPT_NAME: {
                "prompt_input": prompt_input,
                "prompt_output": prompt_output,
                "is_accepted": accepted,
                "edited_output": None if accepted else edited,
            }
        },
        "is_accepted": accepted,
        "target": float(human),
    }


def reason_with_rule(reason: str | None, rule: dict[str, Any] | None) -> str | None:
    """The reviewer's reason, then the guideline rule the correction applies (as the
    align examples write it): ragas' ``edited_output`` has no field of its own for a
    rule, and its ``reason`` is the text a trained prompt learns to give."""
    if not rule:
        return reason
    named = rule_line(rule["id"], rule.get("text"))
    return f"{reason}\n{named}" if reason else named


def mlflow_assessment(item: dict[str, Any]) -> dict[str, Any]:
    """An ``Assessment`` with ``feedback``: the reviewer's value, the reason as
    ``rationale``, a ``HUMAN`` source; the judge's value and the item in ``metadata``
    (a map of strings)."""
    human = item["human"]
    metadata = {
        "ragreview.record": item["record"],
        "ragreview.dataset": item["dataset"],
        "ragreview.target": item["target"],
        "ragreview.judge_value": json.dumps(item["judge"]["value"], ensure_ascii=False),
    }
    if item["item"] is not None:
        metadata["ragreview.item"] = item["item"]
    if item["judge"]["reason"]:
        metadata["ragreview.judge_rationale"] = item["judge"]["reason"]
    if item.get("rule"):
        metadata["ragreview.rule"] = item["rule"]["id"]
        if item["rule"]["text"]:
            metadata["ragreview.rule_text"] = item["rule"]["text"]
    out: dict[str, Any] = {
        "assessment_name": item["label"],
        "trace_id": item["record"],
        "source": {"source_type": "HUMAN", "source_id": human["reviewer"] or "unknown"},
        "feedback": {"value": human["value"]},
        "metadata": metadata,
    }
    if human["at"]:
        out["create_time"] = _rfc3339(human["at"])
    if human["reason"]:
        out["rationale"] = human["reason"]
    return out


def _rfc3339(at: str) -> str:
    """ragreview's ``…+00:00`` times as protobuf JSON's ``…Z``."""
    return at[: -len("+00:00")] + "Z" if at.endswith("+00:00") else at


def fewshot_line(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "input": {
            "record": item["record"],
            "label": item["label"],
            "target": item["target"],
            "item": item["item"],
            **item["context"],
        },
        "judge_output": {"value": item["judge"]["value"], "reason": item["judge"]["reason"]},
        "corrected_output": {"value": item["human"]["value"]},
        "reason": item["human"]["reason"],
        "rule": item.get("rule"),
    }


def _items(db: sqlite_utils.Database, dataset: str, reviewed_only: bool) -> Iterator[dict]:
    return disagreements.items(db, dataset, reviewed_only=reviewed_only)


def write(
    db: sqlite_utils.Database, dataset: str, fmt: str, out: TextIO, *, reviewed_only: bool
) -> int:
    """Write the corrections as ``fmt`` (one of ``export.LOOP_FORMATS``); the count."""
    count = 0
    if fmt == RAGAS:
        doc: dict[str, list[dict[str, Any]]] = {}
        for item in _items(db, dataset, reviewed_only):
            doc.setdefault(item["label"], []).append(ragas_sample(item))
            count += 1
        out.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return count
    line = mlflow_assessment if fmt == MLFLOW else fewshot_line
    for item in _items(db, dataset, reviewed_only):
        out.write(json.dumps(line(item), ensure_ascii=False) + "\n")
        count += 1
    return count
