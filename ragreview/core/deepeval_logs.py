"""DeepEval's ``verboseLogs`` text: read the steps a metric wrote, write its verdicts back.

DeepEval builds the text in ``metrics/utils.construct_verbose_logs`` from steps, each a
title line and a list as ``utils.prettify_list`` prints it, joined by ``" \\n \\n"`` (the
last step, score and reason, is left out). ``prettify_list`` prints a string as
``"<text>"`` without escaping it and a verdict (a pydantic model) as
``json.dumps(model_dump(), indent=4, ensure_ascii=True)`` indented four more spaces;
items are joined by ``",\\n    "`` inside ``"[\\n    …\\n]"``, an empty list is ``[]``.
"""

from __future__ import annotations

import json
from typing import Any

STEP_SEPARATOR = " \n \n"
ITEM_SEPARATOR = ",\n    "


def steps(logs: str) -> dict[str, str]:
    """{title without its colon and parameters: the step's list text}, e.g.
    ``{"Truths": "[…]", "Claims": "[…]", "Verdicts": "[…]"}``."""
    out: dict[str, str] = {}
    for step in logs.split(STEP_SEPARATOR):
        title, _, body = step.partition("\n")
        name = title.split("(")[0].strip().rstrip(":").strip()
        if name and name not in out:
            out[name] = body
    return out


def strings(body: str) -> list[str] | None:
    """A list of strings as ``prettify_list`` prints it (unescaped), or None."""
    if body.strip() == "[]":
        return []
    if not (body.startswith('[\n    "') and body.endswith('"\n]')):
        return None
    inner = body[len('[\n    "') : -len('"\n]')]
    return inner.split('"' + ITEM_SEPARATOR + '"')


def objects(body: str) -> list[dict[str, Any]] | None:
    """A list of verdicts (JSON objects), or None when the text is not one."""
    try:
        value = json.loads(body)
    except ValueError:
        return None
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return value
    return None


def format_objects(values: list[dict[str, Any]]) -> str:
    """``prettify_list`` of verdict models, from their dumped dicts."""
    if not values:
        return "[]"
    parts = [json.dumps(v, indent=4, ensure_ascii=True).replace("\n", "\n    ") for v in values]
    return "[\n    " + ITEM_SEPARATOR.join(parts) + "\n]"


def replace_verdicts(logs: str, verdicts: list[dict[str, Any]]) -> str:
    """The log text with its ``Verdicts:`` step rewritten (the other steps as they were)."""
    parts = logs.split(STEP_SEPARATOR)
    for i, step in enumerate(parts):
        title, sep, _ = step.partition("\n")
        if title.split("(")[0].strip().rstrip(":").strip() == "Verdicts":
            parts[i] = title + sep + format_objects(verdicts)
            break
    return STEP_SEPARATOR.join(parts)
