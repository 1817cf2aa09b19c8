"""Record families declared once: the labels a record of each family carries, the keys
that set them, its verdicts, metrics and settings, and where its judge's reasoning is.

The review screen is driven by these declarations (keys, footer, help, palette, what a
row shows), so a new source family plugs in by adding one ``Family`` to ``FAMILIES``.
See docs/tui.md for what each key does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import rubric
from .keys import context_key, fact_key, reference_statement_key, statement_key
from .record import Record

Reasons = dict[tuple[str, str], str]  # (label, target) -> the judge's words


@dataclass(frozen=True)
class KeyUse:
    """One label key of a family: ``key`` sets ``labels[kind]`` on an item of that kind
    (kind ``record`` = a record-level verdict)."""

    action: str  # binding id of the review action (tui/actions.py)
    key: str  # as shown in the footer and help
    word: str  # footer word
    labels: Mapping[str, str]  # item kind -> label name
    when: Callable[[Record], bool] | None = None  # applies only to such records
    value: Any = None  # the value the key sets (None: it toggles or steps the label)


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    keys: tuple[KeyUse, ...]
    item_labels: Mapping[str, tuple[str, ...]]  # item kind -> labels shown on its row
    verdicts: tuple[str, ...] = ()  # record-level labels shown in the verdict bar
    metrics: tuple[str, ...] = ()  # metric-name prefixes shown in the panel
    settings: tuple[str, ...] = ()  # dataset settings shown in the header
    task_prefix: str = ""
    # item kinds shown first (the ones its keys label), before documents and response
    first: tuple[str, ...] = ()
    counts: tuple[str, ...] = ()  # metrics that count (shown without decimals)
    editable: tuple[str, ...] = ()  # item kinds a reviewer may add, delete, edit, split
    reasons: Callable[[Record, Any], Reasons] = field(default=lambda rec, src: {})
    # a record is in the family whatever its task when this says so (a rubric it carries)
    claims: Callable[[Record], bool] | None = None

    def owns_task(self, task: str | None) -> bool:
        if not task:
            return False
        return task == self.name or bool(self.task_prefix) and task.startswith(self.task_prefix)

    def labels(self) -> set[str]:
        names = {n for names in self.item_labels.values() for n in names}
        return names | set(self.verdicts)


def _counterfactual(rec: Record) -> bool:
    return bool(rec.counterfactual) or rec.task == "rgb-counterfactual"


def _annotated(rec: Record) -> bool:
    return "ragas_metric" in rec.data


def _dicts(value: Any) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _trace_reasons(rec: Record, src: Any) -> Reasons:
    out: Reasons = {}
    if not isinstance(src, dict):
        return out
    for entry in _dicts(src.get("sentence_support_information")):
        key, why = entry.get("response_sentence_key"), _text(entry.get("explanation"))
        if isinstance(key, str) and why:
            out[("supported", key)] = why
    for name, column in (
        ("relevant", "relevance_explanation"),
        ("supported", "overall_supported_explanation"),
    ):
        if why := _text(src.get(column)):
            out[(name, "*")] = why
    return out


def _rgb_reasons(rec: Record, src: Any) -> Reasons:
    why = _text(src.get("evaluation")) if isinstance(src, dict) else None
    if not why:
        return {}
    # the judge script's text explains its own verdict (formats/rgb.py)
    script = rec.data.get("rgb_script")
    return {("identified" if script == "fact" else "not_addressed", "*"): why}


def _script(name: str) -> Callable[[Record], bool]:
    """The record carries the verdict of RGB's judge script ``name`` (reject / fact)."""
    return lambda rec: rec.data.get("rgb_script") == name


def _longform_reasons(rec: Record, src: Any) -> Reasons:
    if not isinstance(src, dict):
        return {}
    side = rec.data.get("safe", {}).get("side") if isinstance(rec.data.get("safe"), dict) else None
    # the source is the eval dict itself, or the per-prompt entry holding it per side
    ev = src.get(f"{side}_posthoc_eval_data", src) if side else src
    statements = _dicts(ev.get("checked_statements")) if isinstance(ev, dict) else []
    out: Reasons = {}
    for i, st in enumerate(statements):
        rate = st.get("rate_data")
        if isinstance(rate, dict) and (why := _text(rate.get("response"))):
            out[("fact", fact_key(i))] = why
    return out


def _ragas_reasons(rec: Record, src: Any) -> Reasons:
    if not isinstance(src, dict):
        return {}
    out: Reasons = {}
    for column, name, key in (
        ("statements", "statement", statement_key),
        ("classifications", "attributed", reference_statement_key),
        ("context_precision_verdicts", "context_useful", context_key),
    ):
        value = src.get(column)
        if isinstance(value, str):  # ragas' CSV export keeps these as JSON text
            try:
                value = json.loads(value)
            except ValueError:
                value = None
        for i, entry in enumerate(_dicts(value)):
            if why := _text(entry.get("reason")):
                out[(name, key(i))] = why
    for prompt in (
        (src.get("prompts") or {}).values() if isinstance(src.get("prompts"), dict) else ()
    ):
        output = prompt.get("prompt_output") if isinstance(prompt, dict) else None
        if isinstance(output, dict) and (why := _text(output.get("reason"))):
            out[("verdict", "*")] = why
    return out


def _declares_rubric(rec: Record) -> bool:
    return bool(rubric.metric_names(rec))


def _toggle(action: str, key: str, word: str, **labels: str) -> KeyUse:
    return KeyUse(action, key, word, labels)


TRACE = Family(
    "trace",
    "RAGBench / TRACe",
    keys=(
        _toggle("toggle-relevant", "r", "relevant", doc="relevant"),
        _toggle("toggle-utilized", "u", "utilized", doc="utilized"),
        _toggle("toggle-supported", "s", "supported", response="supported"),
        _toggle("edit-support-keys", "l", "keys", response="support_keys"),
    ),
    item_labels={"doc": ("relevant", "utilized"), "response": ("supported", "support_keys")},
    metrics=("trace.",),
    settings=("trace.variant",),
    reasons=_trace_reasons,
)
RGB = Family(
    "rgb",
    "RGB",
    keys=(
        _toggle("toggle-rejected", "x", "rejected", record="rejected"),
        KeyUse(
            "toggle-error-detected", "e", "error", {"record": "error_detected"}, _counterfactual
        ),
        _toggle("toggle-supported", "s", "matched", part="part_matched"),
        # the LLM-judge scripts' verdicts, on the records whose file carries them
        KeyUse(
            "toggle-not-addressed", "W", "judge", {"record": "not_addressed"}, _script("reject")
        ),
        KeyUse("toggle-identified", "F", "judge", {"record": "identified"}, _script("fact")),
    ),
    item_labels={"part": ("part_matched",)},
    verdicts=("rejected", "error_detected", "not_addressed", "identified"),
    metrics=("rgb.",),
    settings=("rgb.variant",),
    task_prefix="rgb",
    first=("response", "part"),
    reasons=_rgb_reasons,
)
MTRAG = Family(
    "mtrag",
    "MT-RAG",
    keys=(
        _toggle("cycle-idk", "i", "idk", record="idk"),
        _toggle("cycle-answerability", "a", "answerable", record="answerability"),
        _toggle("cycle-underspecified", "U", "underspec", record="underspecified"),
        _toggle("set-rating", "g", "rating", record="rb_llm_rating"),
    ),
    item_labels={},
    verdicts=("idk", "answerability", "underspecified", "rb_llm_rating"),
    metrics=("mtrag.",),
    first=("response",),
    counts=("mtrag.length",),
)
LONGFORM = Family(
    "longform",
    "FActScore / SAFE",
    keys=(_toggle("cycle-fact", "f", "S/NS/IR", fact="fact"),),
    item_labels={"fact": ("fact",)},
    metrics=("longform.",),
    settings=("longform.k",),
    first=("fact",),
    editable=("fact",),
    counts=("longform.supported", "longform.not_supported", "longform.irrelevant"),
    reasons=_longform_reasons,
)
RAGAS = Family(
    "ragas",
    "ragas",
    keys=(
        # one pass/fail verdict per sample: ragas' annotation export (MetricAnnotation)
        KeyUse("toggle-verdict", "v", "verdict", {"record": "verdict"}, _annotated),
        _toggle(
            "toggle-supported",
            "s",
            "statement",
            statement="statement",
            reference_statement="attributed",
        ),
        _toggle("toggle-context-useful", "c", "context", doc="context_useful"),
    ),
    item_labels={
        "doc": ("context_useful",),
        "statement": ("statement",),
        "reference_statement": ("attributed",),
    },
    verdicts=("verdict",),
    metrics=("ragas.",),
    first=("statement", "reference_statement"),
    editable=("statement", "reference_statement"),
    reasons=_ragas_reasons,
)


def _deepeval_reasons(rec: Record, src: Any) -> Reasons:
    """Each verdict's reason from the metric's ``verboseLogs``; Faithfulness's truths
    and every verdict metric's own ``reason`` at the record level."""
    from .deepeval_reasons import reasons as deepeval_reasons  # only for DeepEval records

    return deepeval_reasons(rec, src)


def _ranks_nodes(rec: Record) -> bool:
    """The test case has Contextual Precision verdicts (its document rows take them)."""
    return bool(rec.targets("node"))


_DEEPEVAL_ITEMS = {
    "claim": "deepeval_claim",
    "answer_statement": "deepeval_statement",
    "context_statement": "deepeval_context_statement",
    "expected_sentence": "deepeval_expected",
}
DEEPEVAL = Family(
    "deepeval",
    "DeepEval",
    keys=tuple(
        use
        for value, key in (("yes", "y"), ("no", "N"))
        for use in (
            KeyUse(f"verdict-{value}", key, value, _DEEPEVAL_ITEMS, value=value),
            KeyUse(f"verdict-{value}", key, value, {"doc": "deepeval_node"}, _ranks_nodes, value),
        )
    )
    # idk only where DeepEval's schema has it (YesNoBorderline): claims, output statements
    + (
        KeyUse(
            "verdict-idk",
            "I",
            "idk",
            {k: _DEEPEVAL_ITEMS[k] for k in ("claim", "answer_statement")},
            value="idk",
        ),
    ),
    item_labels={"doc": ("deepeval_node",)}
    | {kind: (label,) for kind, label in _DEEPEVAL_ITEMS.items()},
    metrics=("deepeval.",),
    settings=("deepeval.penalize_ambiguous_claims",),
    first=("claim", "answer_statement", "context_statement", "expected_sentence"),
    reasons=_deepeval_reasons,
)

# The human metrics an InspectorRAGet record declares (core.rubric): its keys act on the
# metric chosen with `w`, not on one fixed label, so they name RUBRIC_LABEL instead.
RUBRIC_LABEL = "<declared metric>"
RUBRIC = Family(
    "rubric",
    "InspectorRAGet rubric",
    keys=(
        _toggle("next-metric", "w", "metric", record=RUBRIC_LABEL),
        _toggle("step-up", "+", "higher (from none: lowest)", record=RUBRIC_LABEL),
        _toggle("step-down", "-", "lower", record=RUBRIC_LABEL),
    ),
    item_labels={},
    metrics=("rubric.",),
    first=("response",),
    claims=_declares_rubric,
)

# RAGChecker: one key per checker verdict, on a claim (its check against the other
# answer) or on one of its claim x chunk cells listed under it (docs/tui.md)
_RAGCHECKER_TARGETS = {
    "statement": "answer2response",
    "reference_statement": "response2answer",
    "statement_chunk": "retrieved2response",
    "reference_statement_chunk": "retrieved2answer",
}
RAGCHECKER = Family(
    "ragchecker",
    "RAGChecker",
    keys=tuple(
        KeyUse(action, key, word, _RAGCHECKER_TARGETS, value=value)
        for value, action, key, word in (
            ("Entailment", "set-entailment", "Y", "entailed"),
            ("Neutral", "verdict-no", "N", "neutral"),  # (DeepEval's no: the same key)
            ("Contradiction", "set-contradiction", "C", "contradicted"),
        )
    ),
    item_labels={kind: (name,) for kind, name in _RAGCHECKER_TARGETS.items()},
    metrics=("ragchecker.",),
    first=("statement", "reference_statement"),  # each with its cells (tui.model.items_of)
)

FAMILIES: tuple[Family, ...] = (TRACE, RGB, MTRAG, LONGFORM, RAGAS, RUBRIC, DEEPEVAL, RAGCHECKER)
BY_NAME = {f.name: f for f in FAMILIES}
_FAMILY_OF_LABEL = {name: f for f in FAMILIES for name in f.labels()}


def families_of(record: Record, layers: tuple[Mapping[str, Any], ...] = ()) -> tuple[Family, ...]:
    """The families a record belongs to: its task's, plus any whose labels a layer gives
    it. A record that says nothing (no known task, no labels) gets every family (ragas
    only with statements)."""
    found = [f for f in FAMILIES if f.owns_task(record.task) or (f.claims and f.claims(record))]
    for layer in layers:
        for name in layer:
            family = _FAMILY_OF_LABEL.get(name)
            if family is not None and family not in found:
                found.append(family)
    if found:
        return tuple(found)
    # a ragas context verdict repeats on every sentence of a document: only where the
    # record has ragas' statements
    ragas = bool(record.statements or record.reference_statements)
    # (DeepEval's keys act on documents too, and RAGChecker's labels come only with its
    # own files: each only for its own records)
    return tuple(
        f
        for f in FAMILIES
        if (f is not RAGAS or ragas) and f.claims is None and f not in (DEEPEVAL, RAGCHECKER)
    )


def family_of_label(name: str) -> Family:
    return _FAMILY_OF_LABEL[name]


def reasons(record: Record, families: tuple[Family, ...], source: str | None) -> Reasons:
    """The judge's reasoning per (label, target) found in the record's source row."""
    try:
        src = json.loads(source) if source else None
    except ValueError:
        src = None
    out: Reasons = {}
    for family in families:
        out.update(family.reasons(record, src))
    return out
