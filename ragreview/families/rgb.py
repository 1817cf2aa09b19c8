"""RGB: rejection, answer parts matched, counterfactual error detection, and the
LLM-judge scripts' own verdicts (docs/metrics.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.families import Family, KeyUse, Reasons, Variant
from ..core.labels import LabelSpec
from ..core.metrics import rgb
from ..core.record import Record
from ._common import text


def _counterfactual(rec: Record) -> bool:
    return bool(rec.counterfactual) or rec.task == "rgb-counterfactual"


def _reasons(rec: Record, src: Any) -> Reasons:
    why = text(src.get("evaluation")) if isinstance(src, dict) else None
    if not why:
        return {}
    # the judge script's text explains its own verdict (formats/rgb.py)
    script = rec.data.get("rgb_script")
    return {("identified" if script == "fact" else "not_addressed", "*"): why}


def _script(name: str) -> Callable[[Record], bool]:
    """The record carries the verdict of RGB's judge script ``name`` (reject / fact)."""
    return lambda rec: rec.data.get("rgb_script") == name


FAMILY = Family(
    "rgb",
    "RGB",
    judge_task="rgb",  # ragreview judge --task auto
    task_prefix="rgb",  # rgb-noise, rgb-negative, rgb-integration, rgb-counterfactual
    catalogue=(
        LabelSpec(
            "rejected", "record", "bool", "rgb", "the response refuses for lack of information"
        ),
        LabelSpec(
            "part_matched", "part", "bool", "rgb", "the answer part is found in the response"
        ),
        LabelSpec(
            "error_detected",
            "record",
            "bool",
            "rgb",
            "the response flags the factual error planted in the documents",
        ),
        # the LLM-judge scripts' own verdicts, kept beside evalue.py's label/factlabel
        LabelSpec(
            "not_addressed",
            "record",
            "bool",
            "rgb",
            "reject_evalue.py's judge: the question is not addressed by the documents",
        ),
        LabelSpec(
            "identified",
            "record",
            "bool",
            "rgb",
            "fact_evalue.py's judge: the model identified the factual errors",
        ),
    ),
    keys=(
        KeyUse("toggle-rejected", "x", "rejected", {"record": "rejected"}),
        KeyUse(
            "toggle-error-detected", "e", "error", {"record": "error_detected"}, _counterfactual
        ),
        KeyUse("toggle-supported", "s", "matched", {"part": "part_matched"}),
        # the LLM-judge scripts' verdicts, on the records whose file carries them
        # (W: "won't answer", F: "found the error"; x and e are evalue.py's own labels)
        KeyUse(
            "toggle-not-addressed", "W", "judge", {"record": "not_addressed"}, _script("reject")
        ),
        KeyUse("toggle-identified", "F", "judge", {"record": "identified"}, _script("fact")),
    ),
    item_labels={"part": ("part_matched",)},
    verdicts=("rejected", "error_detected", "not_addressed", "identified"),
    metrics=("rgb.",),
    settings=("rgb.variant",),
    first=("response", "part"),
    reasons=_reasons,
    compute=rgb.metrics,
    # (rgb.stats; the columns of the metric_stats table (store.metric_stats_writes), in this order)
    stats=tuple(
        (f"rgb.{n}", "REAL")
        for n in (
            "rejected",
            "correct",
            "negative",
            "counterfactual",
            "rejection_reference",
            "rejection_simple",
            "detected",
            "corrected_reference",
            "corrected_simple",
        )
    ),
    variants=(Variant("rgb.variant", "reference", ("reference", "simple")),),
)
