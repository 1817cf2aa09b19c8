"""RAGChecker output JSON (amazon-science/RAGChecker: ``RAGResults.to_json``).

One document, ``{"results": [RAGResult…], "metrics": {…}}``. Each result is a record
(id: its ``query_id``): ``query`` → question, ``retrieved_context`` → documents (one
chunk each, whole), ``response`` → response (sentencized), ``gt_answer`` → reference;
``response_claims`` → statements ``s1``…, ``gt_answer_claims`` → reference statements
``r1``…, each shown as its triplet's words. The four label arrays are the judge layer:
``answer2response`` per response claim, ``response2answer`` per ground-truth claim,
``retrieved2response`` / ``retrieved2answer`` per claim x chunk (targets ``s1/c0``).
The per-result ``metrics`` are kept as ``stored.ragchecker.*``.

Writing back patches the label arrays of the changed results and their ``metrics``,
and recomputes the aggregate ``metrics`` (``evaluator.py``: mean x 100 rounded to one
decimal) under the group keys the file used (``overall``… or ``overall_metrics``…),
in RAGChecker's own layout (``to_json(indent=2)``). Everything else is as read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.keys import cell_key, reference_statement_key, statement_key
from ..core.labels import ENTAILMENT, effective
from ..core.metrics import ragchecker as metric
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import (
    Draft,
    changed,
    finish,
    finite,
    keyed_response,
    kind,
    reread,
    unexpected,
)
from .json_limits import has_not_utf8, non_finite, not_utf8
from .jsonio import load_document, read_text
from .locator import Locator

NAME = "ragchecker"
LISTING = Listing(
    "one JSON document ({results, metrics})",
    (("results", "retrieved_context", "gt_answer"),),
    "claim-level entailment (answer2response, response2answer, claim x chunk); metrics",
)
TRAITS = Traits()
TASK = "ragchecker"
# label -> (the claim list it runs over, per chunk or not)
ARRAYS = {
    "answer2response": ("response_claims", False),
    "response2answer": ("gt_answer_claims", False),
    "retrieved2response": ("response_claims", True),
    "retrieved2answer": ("gt_answer_claims", True),
}
_KEY = {"response_claims": statement_key, "gt_answer_claims": reference_statement_key}


def sniff(obj: dict[str, Any]) -> bool:
    results = obj.get("results")
    if not isinstance(results, list):
        return False
    first = next((r for r in results if isinstance(r, dict)), None)
    return first is not None and "retrieved_context" in first and "gt_answer" in first


def _results(path: Path, text: str) -> dict[str, Any]:
    doc = load_document(path, text)
    if not isinstance(doc, dict):
        raise InputError(str(path), 1, None, f"expected a RAGChecker object, got {kind(doc)}")
    if not isinstance(doc.get("results"), list):
        raise InputError(str(path), Locator(text).line("results"), "results", "expected a list")
    return doc


def document(path: Path, text: str | None = None) -> str:
    """What writing back needs besides the results (they are the records' sources): the
    rest of the document, and how RAGChecker laid it out."""
    if text is None:
        text = read_text(path)
    doc = load_document(path, text)
    rest = {k: v for k, v in doc.items() if k != "results"} if isinstance(doc, dict) else {}
    layout = {"ascii": text.isascii(), "newline": text.endswith("\n")}
    return json.dumps({"document": rest, "layout": layout}, ensure_ascii=False)


def stored_aggregates(document: str | None) -> dict[str, float | None]:
    """The aggregates the file states (its top-level ``metrics``, under either spelling),
    by our names (``ragchecker.overall.precision``); NaN and non-numbers as None."""
    try:
        kept = json.loads(document) if document else {}
    except ValueError:
        return {}
    held = kept.get("document", {}).get("metrics") if isinstance(kept, dict) else None
    out: dict[str, float | None] = {}
    if not isinstance(held, dict):
        return out
    for group, names in metric.GROUPS.items():
        values = held.get(group, held.get(f"{group}_metrics"))
        if isinstance(values, dict):
            for name in names:
                if name in values:
                    out[f"{metric.PREFIX}{group}.{name}"] = finite(values[name])
    return out


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    try:
        if text is None:
            text = read_text(path)
        doc = _results(path, text)
    except InputError as err:
        return iter([err])
    locator = Locator(text)
    drafts = _drafts(path, doc["results"], locator, has_not_utf8(text))
    return finish(path, drafts, locator=locator)


def _drafts(
    path: Path, results: list[Any], locator: Locator, bytes_not_utf8: bool = False
) -> Iterator[Draft | InputError]:
    """A draft per result, or its error at its line. RAGChecker writes NaN where a
    metric is the mean of nothing (``claim_recall`` without chunks): in ``metrics``
    that is an undefined score, kept as NaN in the source; elsewhere NaN is an error.
    ``bytes_not_utf8``: the file holds such bytes, each its result's error (named as
    the file names the field, before any check of the value)."""
    for number, result in enumerate(results, start=1):
        where = f"results[{number - 1}]"
        try:
            if not isinstance(result, dict):
                raise RecordError("", f"expected an object, got {kind(result)}")
            found = not_utf8(result) if bytes_not_utf8 else None
            if found is not None:
                raise RecordError(found[0], found[1])
            found = non_finite({k: v for k, v in result.items() if k != "metrics"})
            if found is not None:
                raise RecordError(found[0], found[1])
            found = non_finite(_nan_free(result.get("metrics")))
            if found is not None:
                raise RecordError(f"metrics.{found[0]}" if found[0] else "metrics", found[1])
            made = draft(result, number)
        except Exception as err:  # noqa: BLE001 (see common.unexpected)
            rec_err = err if isinstance(err, RecordError) else unexpected(err)
            full = f"{where}.{rec_err.field}" if rec_err.field else where
            full = full.replace(".[", "[")
            yield InputError(str(path), locator.line(full), full, rec_err.message)
            continue
        made.where = where
        yield made


def _nan_free(metrics: Any) -> Any:
    if not isinstance(metrics, dict):
        return metrics
    return {k: v for k, v in metrics.items() if not (isinstance(v, float) and v != v)}


def _text(result: Mapping[str, Any], name: str) -> str | None:
    value = result.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError(name, f"expected a string, got {kind(value)}")
    return value


def _claims(result: Mapping[str, Any], name: str) -> list[list[str]]:
    """``[[key, text], …]``: a triplet shown as its words, a plain claim as itself."""
    claims = result.get(name)
    if claims is None:
        return []
    if not isinstance(claims, list):
        raise RecordError(name, f"expected a list, got {kind(claims)}")
    out = []
    for i, claim in enumerate(claims):
        if isinstance(claim, list) and all(isinstance(part, str) for part in claim):
            text = " ".join(part.strip() for part in claim)
        elif isinstance(claim, str):
            text = claim
        else:
            raise RecordError(f"{name}[{i}]", f"expected a triplet of strings, got {kind(claim)}")
        out.append([_KEY[name](i), text])
    return out


def _verdict(value: Any, where: str) -> str:
    if value not in ENTAILMENT:
        allowed = ", ".join(ENTAILMENT)
        raise RecordError(where, f"expected one of {allowed}, got {json.dumps(value)}")
    return value


def _labels(
    result: Mapping[str, Any], name: str, claims: list[list[str]], chunks: int
) -> dict[str, str] | None:
    """One label array as ``{target: verdict}``; None when the result has none yet."""
    given = result.get(name)
    if given is None:
        return None
    per_chunk = ARRAYS[name][1]
    if not isinstance(given, list) or len(given) != len(claims):
        source = ARRAYS[name][0]
        got = f"{len(given)} entries" if isinstance(given, list) else kind(given)
        raise RecordError(name, f"expected a list of one entry per {source} entry, got {got}")
    out = {}
    for (key, _), value in zip(claims, given, strict=True):
        at = f"{name}[{int(key[1:]) - 1}]"
        if not per_chunk:
            out[key] = _verdict(value, at)
            continue
        if not isinstance(value, list) or len(value) != chunks:
            got = f"{len(value)} entries" if isinstance(value, list) else kind(value)
            raise RecordError(at, f"expected one verdict per retrieved chunk ({chunks}), got {got}")
        for c, cell in enumerate(value):
            out[cell_key(key, c)] = _verdict(cell, f"{at}[{c}]")
    return out


def draft(result: Mapping[str, Any], number: int) -> Draft:
    chunks = result.get("retrieved_context") or []
    if not isinstance(chunks, list):
        raise RecordError("retrieved_context", f"expected a list, got {kind(chunks)}")
    documents = []
    for i, chunk in enumerate(chunks):
        if not isinstance(chunk, dict) or not isinstance(chunk.get("text"), str):
            raise RecordError(f"retrieved_context[{i}]", "expected an object with a text")
        doc: dict[str, Any] = {"sentences": [[f"{i}a", chunk["text"]]]}
        if chunk.get("doc_id") is not None:
            doc["id"] = chunk["doc_id"]
        documents.append(doc)
    data: dict[str, Any] = {"task": TASK, "documents": documents}
    if (query := _text(result, "query")) is not None:
        data["question"] = query
    data["response"] = keyed_response(_text(result, "response") or "")
    if (answer := _text(result, "gt_answer")) is not None:
        data["references"] = [answer]
    claims = {name: _claims(result, name) for name in _KEY}
    data["statements"] = claims["response_claims"]
    data["reference_statements"] = claims["gt_answer_claims"]
    stored = result.get("metrics")
    if stored is not None and not isinstance(stored, dict):
        raise RecordError("metrics", f"expected an object, got {kind(stored)}")
    data["scores"] = {
        f"stored.{metric.PREFIX}{name}": finite(value)
        for name, value in (stored or {}).items()
        if name in metric.METRICS
    }
    judge = {}
    for name, (source, _) in ARRAYS.items():
        found = _labels(result, name, claims[source], len(documents))
        if found:
            judge[name] = found
    text = json.dumps(result, ensure_ascii=False)
    return Draft(number, number, data, judge, text, result.get("query_id"), id_field="query_id")


# -- writing back ------------------------------------------------------------------------


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    text = settings.get("source.document")
    if not text:
        raise InputError(NAME, None, None, "the RAGChecker document was not stored at import")
    kept = json.loads(text)
    doc, layout = dict(kept["document"]), kept["layout"]
    results, rows, touched = [], [], False
    for item in items:
        if item.source is None:
            raise InputError(item.record.id, None, "source", "record has no RAGChecker source")
        result = json.loads(item.source)
        if changed(item.judge, item.human):
            patch(result, item, effective(item.judge, item.human))
            touched = True
        results.append(result)
        rows.append(_result_values(result, item))
    doc = {"results": results, **doc}
    if (touched or settings.get("export.subset")) and isinstance(doc.get("metrics"), dict):
        _aggregate(doc["metrics"], rows)
    out.write(json.dumps(doc, indent=2, ensure_ascii=layout["ascii"]))
    if layout["newline"]:
        out.write("\n")
    return len(results)


def _result_values(result: Mapping[str, Any], item: ExportRecord) -> dict[str, float | None]:
    """A result's metrics as RAGChecker's evaluator aggregates them: those the result
    holds (``evaluate`` skips a metric already in ``result.metrics``), the rest computed."""
    held = result.get("metrics") if isinstance(result.get("metrics"), dict) else {}
    assert isinstance(held, dict)
    out: dict[str, float | None] = {}
    computed = None
    for name in metric.METRICS:
        value = finite(held.get(name)) if name in held else None
        if value is None:
            if computed is None:
                computed = metric.values(item.record, effective(item.judge, item.human))
            value = computed[name]
        out[name] = value
    return out


def _aggregate(metrics: dict[str, Any], rows: list[dict[str, float | None]]) -> None:
    """The aggregate values under the spelling the file used (``overall`` in older
    output, ``overall_metrics`` in current), for the metrics each group holds."""
    values = metric.aggregates(rows)
    for group, names in metric.GROUPS.items():
        for key in (group, f"{group}_metrics"):
            held = metrics.get(key)
            if isinstance(held, dict):
                for name in names:
                    if name in held:
                        held[name] = _number(values[group][name])


def patch(result: dict[str, Any], item: ExportRecord, eff: Mapping[str, Mapping[str, Any]]) -> None:
    """The result's label arrays and per-result metrics from the effective labels."""
    rec = item.record
    claims = {"response_claims": rec.statements, "gt_answer_claims": rec.reference_statements}
    for name, (source, per_chunk) in ARRAYS.items():
        labels = eff.get(name)
        if not labels or not isinstance(result.get(name), list):
            continue
        array = result[name]
        for i, (key, _) in enumerate(claims[source]):
            if not per_chunk:
                array[i] = labels.get(key, array[i])
                continue
            for c in range(len(array[i])):
                array[i][c] = labels.get(cell_key(key, c), array[i][c])
    held = result.get("metrics")
    if isinstance(held, dict):
        for name, value in metric.values(rec, eff).items():
            if name in held:
                held[name] = _number(value)


def _number(value: float | None) -> float:
    """A metric as RAGChecker writes it: an undefined one (numpy's mean of nothing) NaN."""
    return float("nan") if value is None else value


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the record as written gives."""
    result = json.loads(item.source or "{}")
    patch(result, item, effective(item.judge, item.human))
    return reread(draft(result, 1))
