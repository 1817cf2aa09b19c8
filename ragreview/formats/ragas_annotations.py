"""ragas' human-annotation export (``MetricAnnotation``), in and out.

``{metric: [sample, …]}`` where a sample is ``{metric_input, metric_output, prompts:
{prompt_name: {prompt_input, prompt_output, edited_output?, is_accepted?}},
is_accepted}``. One record per sample, in file order across metrics; the metric name
is kept on the record (``ragas_metric``) so the writer can regroup.

The judge's ``verdict`` is ``metric_output`` (0/1). The human verdict a sample already
expresses is the ``verdict`` of an ``edited_output`` when there is one, else the
opposite of the judge's when ``is_accepted`` is false, the judge's own when it is true
(the human agreed), else none. A sample with an ``is_accepted`` decision is a reviewed
record: its human layer holds that verdict, equal to the judge's where accepted, so
``agreement`` compares judge and human on the file as imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from ..core.errors import InputError, RecordError
from ..core.guidelines import rule_line
from ..core.import_items import ImportItem, Unchanged
from ..core.labels import effective
from ..core.record import parse_record
from .base import ExportRecord
from .common import finite, kind, loads_source, unexpected
from .json_limits import non_finite, not_utf8, shown
from .locator import Locator
from .ragas_columns import canonical_fields

LABEL = "verdict"


def sniff(obj: Mapping[str, Any]) -> bool:
    # (any sample, not all: one broken sample is its own error, not an unknown format)
    return (
        bool(obj)
        and all(isinstance(v, list) for v in obj.values())
        and any(isinstance(s, dict) and "metric_input" in s for v in obj.values() for s in v)
    )


def _binary(value: Any) -> bool | None:
    if value in (0, 1) and not isinstance(value, float | bool):
        return bool(value)
    if isinstance(value, bool | float) and value in (0, 1):
        return bool(value)
    return None


def judge_verdict(sample: Mapping[str, Any]) -> bool | None:
    """The LLM's own verdict: its prompt output (exports may already carry the edited
    value in ``metric_output``), else ``metric_output``."""
    for prompt in (sample.get("prompts") or {}).values():
        output = prompt.get("prompt_output") if isinstance(prompt, dict) else None
        if isinstance(output, dict) and _binary(output.get("verdict")) is not None:
            return _binary(output["verdict"])
    return _binary(sample.get("metric_output"))


def human_verdict(sample: Mapping[str, Any]) -> bool | None:
    if _binary(sample.get("target")) is not None:
        return _binary(sample["target"])
    for prompt in (sample.get("prompts") or {}).values():
        edited = prompt.get("edited_output") if isinstance(prompt, dict) else None
        if isinstance(edited, dict) and _binary(edited.get("verdict")) is not None:
            return _binary(edited["verdict"])
    judge = judge_verdict(sample)
    if judge is None or not decided(sample):
        return None
    return judge if sample["is_accepted"] else not judge


def decided(sample: Mapping[str, Any]) -> bool:
    """The sample carries a human decision (``is_accepted`` true or false)."""
    return isinstance(sample.get("is_accepted"), bool)


def read(
    path: Path, doc: Mapping[str, Any], locator: Locator
) -> Iterator[ImportItem | InputError | Unchanged]:
    number = 0
    for metric, samples in doc.items():
        bad_name = not_utf8(metric) if locator.not_utf8 else None
        if bad_name is not None:  # (formats.source_document refuses the file for it)
            yield InputError(str(path), locator.line(metric), shown(metric), bad_name[1])
            continue
        if not isinstance(samples, list):
            got = kind(samples)
            yield InputError(str(path), locator.line(metric), metric, f"expected a list, got {got}")
            continue
        for j, sample in enumerate(samples):
            number += 1
            where = f"{metric}[{j}]"
            try:
                if not isinstance(sample, dict):
                    raise RecordError("", f"expected an object, got {kind(sample)}")
                found = non_finite(sample)
                if found is None and locator.not_utf8:
                    found = not_utf8(sample)
                if found is not None:
                    raise RecordError(*found)
                inputs = sample.get("metric_input")
                if not isinstance(inputs, dict):
                    raise RecordError("metric_input", f"expected an object, got {kind(inputs)}")
                if not isinstance(sample.get("prompts", {}), dict):
                    raise RecordError("prompts", "expected an object")
                data = {"id": str(number), **canonical_fields(inputs), "ragas_metric": metric}
                output = finite(sample.get("metric_output"))
                data["scores"] = {f"stored.{metric}": output}
                record = parse_record(data)
                judge, human = {}, {}
                verdict = judge_verdict(sample)
                if verdict is not None:
                    judge[LABEL] = {"*": verdict}
                edited = human_verdict(sample)
                # (a decision is kept even where it agrees: the human said so)
                if edited is not None and (edited != verdict or decided(sample)):
                    human[LABEL] = {"*": edited}
                source = json.dumps(sample, ensure_ascii=False)
            except Exception as err:  # noqa: BLE001 (see common.unexpected)
                rec_err = err if isinstance(err, RecordError) else unexpected(err)
                field = f"{where}.{rec_err.field}".rstrip(".").replace(".[", "[")
                yield InputError(str(path), locator.line(field), field, rec_err.message)
                continue
            yield ImportItem(number, record, judge, human, source, reviewed=decided(sample))


class Rules(NamedTuple):
    """The guideline rules of the reviewers' values: record id -> {label: {target:
    rule}}, and each rule's text (docs/align.md)."""

    by_record: Mapping[str, Mapping[str, Mapping[str, str]]]
    texts: Mapping[str, str]

    def note(self, item: ExportRecord) -> str | None:
        """``Guideline rule: R3 (text)`` for the sample's verdict, None without one."""
        rule = self.by_record.get(item.record.id, {}).get(LABEL, {}).get("*")
        return None if rule is None else rule_line(rule, self.texts.get(rule))


def write(
    items: Iterable[ExportRecord], out: TextIO, metrics: list[str], rules: Rules | None = None
) -> int:
    doc: dict[str, list[Any]] = {m: [] for m in metrics}
    count = 0
    for item in items:
        if item.source is None:
            raise InputError(item.record.id, None, "source", "record has no ragas source")
        sample = exported_sample(item, rules.note(item) if rules else None)
        doc.setdefault(str(item.record.data.get("ragas_metric")), []).append(sample)
        count += 1
    out.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    return count


def exported_sample(item: ExportRecord, rule_note: str | None = None) -> dict[str, Any]:
    """The sample with the record's effective verdict written in (when it differs from
    the verdict the sample already expresses); ``rule_note``: the guideline rule of the
    reviewer's verdict, written as the edited output's ``reason`` (ragas' schema has no
    field of its own for it)."""
    sample: dict[str, Any] = loads_source(item.source or "{}")
    want = effective(item.judge, item.human).get(LABEL, {}).get("*")
    expressed = human_verdict(sample)
    judge = judge_verdict(sample)
    if want is not None and want != (expressed if expressed is not None else judge):
        patch(sample, bool(want), judge)
        if rule_note is not None:
            for prompt in (sample.get("prompts") or {}).values():
                edited = prompt.get("edited_output") if isinstance(prompt, dict) else None
                if isinstance(edited, dict):
                    edited["reason"] = rule_note
    return sample


def read_back(item: ExportRecord) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the sample as written gives (only the
    ``verdict``: a sample holds no other label)."""
    sample = exported_sample(item)
    judge, human = judge_verdict(sample), human_verdict(sample)
    layer = {} if judge is None else {LABEL: {"*": judge}}
    if human is not None and human != judge:
        layer[LABEL] = {"*": human}
    return layer


def patch(sample: dict[str, Any], want: bool, judge: bool | None) -> None:
    """Record the reviewer's verdict the way ragas' annotation UI does."""
    accepted = want == judge
    sample["is_accepted"] = accepted
    if "target" in sample:
        sample["target"] = int(want)
    for prompt in (sample.get("prompts") or {}).values():
        if not isinstance(prompt, dict):
            continue
        if "is_accepted" in prompt:
            prompt["is_accepted"] = accepted
        output = prompt.get("prompt_output")
        if accepted:
            prompt["edited_output"] = None
        elif isinstance(output, dict) and "verdict" in output:
            prompt["edited_output"] = {**output, "verdict": int(want)}
