"""DeepEval test runs (confident-ai/deepeval): one JSON document per run.

Four file forms hold a run: ``test_run_<timestamp>.json`` (``DEEPEVAL_RESULTS_FOLDER``),
``.deepeval/.latest_run_full.json`` and ``.deepeval/.temp_test_run_data.json`` (the run
itself) and ``.deepeval/.latest_test_run.json`` (the run under ``testRunData``). Each
entry of ``testCases`` is a record: ``input`` the question, ``retrievalContext`` (else
``context``) the documents, one per node, ``actualOutput`` the response,
``expectedOutput`` the reference. Every metric (``metricsData``) keeps its threshold,
strictMode, score (``stored.deepeval.<metric>``) and error; the five verdict metrics'
verdicts, read from ``verboseLogs`` (``deepeval_logs``), are the judge's labels, keyed
as ``core.deepeval_items`` says.

Writing back patches, per test case with changed labels, each changed metric's
``Verdicts:`` step in ``verboseLogs`` (as DeepEval prints it), its ``score`` and
``success``, the test case's ``success`` and the run's ``testPassed`` / ``testFailed`` /
``metricsScores`` for the metrics that moved; a reviewer's reason replaces ``reason``,
the judge's kept as ``judgeReason``. The rest is the file as read: written the way
DeepEval writes it (``json.dump`` defaults) when the file was in that form, else
re-indented as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..core import deepeval_logs as logs
from ..core.deepeval_items import METRICS, SLUG_OF_NAME, item_key, metric_entries
from ..core.errors import InputError, RecordError
from ..core.import_items import ImportItem, Unchanged
from ..core.keys import context_key, doc_key
from ..core.labels import effective
from ..core.metrics.deepeval import metric_value
from .base import QUIET, ExportRecord, Listing, ReadContext, Traits
from .common import Draft, changed, document_drafts, finish, finite, keyed_response, kind, reread
from .json_limits import finite_only, has_not_utf8
from .jsonio import load_document, read_text
from .locator import Locator

NAME = "deepeval"
LISTING = Listing(
    "one JSON document: a test run (test_run_*.json, .deepeval/*.json)",
    (("testCases",), ("testRunData",)),
    "Faithfulness, Answer Relevancy, Contextual Relevancy / Precision / Recall verdicts from verboseLogs; every metric's stored score",
)
TRAITS = Traits(needs_reasons=True)
WRAPPER = "testRunData"  # .latest_test_run.json
SPELLING = {"yes": "yes", "no": "no", "idk": "idk", "borderline": "idk"}


def sniff(obj: dict[str, Any]) -> bool:
    run = obj.get(WRAPPER, obj)
    return isinstance(run, dict) and isinstance(run.get("testCases"), list)


def _run(doc: Any) -> tuple[dict[str, Any], str]:
    """(the run object, the JSON path of its test cases)."""
    if isinstance(doc, dict) and isinstance(doc.get(WRAPPER), dict):
        return doc[WRAPPER], f"{WRAPPER}.testCases"
    return doc, "testCases"


def document(path: Path, text: str | None = None) -> str:
    """The file's text as read: written back with only the reviewed values changed. A
    file holding bytes that are not UTF-8 (their test cases were refused) is kept as
    parsed, those strings null, as SAFE's is: such text cannot be stored."""
    text = read_text(path) if text is None else text
    if not has_not_utf8(text):
        return text
    return json.dumps(finite_only(load_document(path, text)), ensure_ascii=False)


def read(
    path: Path, text: str | None = None, ctx: ReadContext = QUIET
) -> Iterator[ImportItem | InputError | Unchanged]:
    try:
        if text is None:
            text = read_text(path)
        doc = load_document(path, text)
    except InputError as err:
        return iter([err])
    run, where = _run(doc)
    locator = Locator(text)
    if not isinstance(run, dict) or not isinstance(run.get("testCases"), list):
        return iter(
            [InputError(str(path), 1, where, "expected a DeepEval test run with testCases")]
        )
    cases = run["testCases"]

    def located() -> Iterator[tuple[str, Any]]:
        for i, case in enumerate(cases):
            yield f"{where}[{i}]", case

    def make(case: Any, number: int, at: str) -> Draft:
        return draft(case, number - 1, number)

    return finish(path, document_drafts(path, located(), make, locator), locator=locator)


def verdict(value: Any, ambiguous: bool = True) -> str | None:
    """DeepEval's verdict word as a label value (its ``normalize_qag_verdict``: the
    leading word, lower case; ``borderline`` is newer DeepEval's ``idk``), None for a
    word DeepEval drops (``idk`` too where the metric's schema is yes / no only)."""
    found = re.match(r"[a-z]+", str(value if value is not None else "").strip().lower())
    word = SPELLING.get(found.group(0)) if found else None
    return None if word == "idk" and not ambiguous else word


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "metric"


def draft(case: Any, index: int, number: int) -> Draft:
    if not isinstance(case, dict):
        raise RecordError("", f"expected a test case object, got {kind(case)}")
    data: dict[str, Any] = {"task": "deepeval"}
    if isinstance(case.get("input"), str):
        data["question"] = case["input"]
    nodes = case.get("retrievalContext")
    if nodes is None:
        nodes = case.get("context")
    if nodes is not None and not (
        isinstance(nodes, list) and all(isinstance(n, str) for n in nodes)
    ):
        field = "retrievalContext" if "retrievalContext" in case else "context"
        raise RecordError(field, f"expected a list of strings, got {kind(nodes)}")
    nodes = nodes or []
    data["documents"] = [{"sentences": [[doc_key(i, 0), n]]} for i, n in enumerate(nodes)]
    if isinstance(case.get("actualOutput"), str):
        data["response"] = keyed_response(case["actualOutput"])
    expected = case.get("expectedOutput")
    if isinstance(expected, str):
        data["references"] = [expected]
    metrics_data = case.get("metricsData")
    if metrics_data is None:
        metrics_data = []
    if not isinstance(metrics_data, list):
        raise RecordError("metricsData", f"expected a list, got {kind(metrics_data)}")
    items: dict[str, list[list[Any]]] = {}
    labels: dict[str, dict[str, str]] = {}
    entries, scores, truths = [], {}, None
    taken: set[str] = set()
    for j, metric in enumerate(metrics_data):
        if not isinstance(metric, dict):
            raise RecordError(f"metricsData[{j}]", f"expected an object, got {kind(metric)}")
        name = str(metric.get("name") or f"metric {j + 1}")
        slug = SLUG_OF_NAME.get(name) or _slug(name)
        while slug in taken:  # a second metric of one name: its stored score only
            slug += "_2"
        taken.add(slug)
        score = finite(metric.get("score")) if "score" in metric else None
        entry: dict[str, Any] = {
            "name": name,
            "slug": slug,
            "index": j,
            "threshold": finite(metric.get("threshold")),
            "strict": metric.get("strictMode") is True,
            "score": score,
            "error": bool(metric.get("error")),
            "keys": None,
        }
        if score is not None:
            scores[f"stored.deepeval.{slug}"] = score
        parsed = _verdicts(slug, metric, len(nodes), expected) if slug in METRICS else None
        if parsed is not None:
            kind_items, values, found_truths = parsed
            _, label, item_kind = METRICS[slug]
            entry["keys"] = [key for key, *_ in kind_items]
            items[item_kind] = kind_items
            labels[label] = values
            if found_truths is not None:
                truths = found_truths
        entries.append(entry)
    block: dict[str, Any] = {"case": index, "metrics": entries, "items": items}
    if truths is not None:
        block["truths"] = truths
    data["deepeval"] = block
    if scores:
        data["scores"] = scores
    source = json.dumps(case)
    return Draft(
        number, number, data, {k: v for k, v in labels.items() if v}, source, case.get("name")
    )


def _verdicts(
    slug: str, metric: Mapping[str, Any], nodes: int, expected: Any
) -> tuple[list[list[Any]], dict[str, str], list[str] | None] | None:
    """(items ``[key, text, concerns]``, labels by key, truths) of one verdict metric,
    or None when its ``verboseLogs`` hold no verdicts this reads (a stored score only)."""
    text = metric.get("verboseLogs")
    if not isinstance(text, str) or metric.get("error"):
        return None
    found = logs.steps(text)
    verdicts = logs.objects(found.get("Verdicts", ""))
    if verdicts is None:
        return None
    items: list[list[Any]] = []
    values: dict[str, str] = {}
    if slug == "contextual_relevancy":
        for node, block in enumerate(verdicts):
            inner = block.get("verdicts")
            if not isinstance(inner, list):
                return None
            for i, v in enumerate(inner):
                value = verdict(v.get("verdict"), False) if isinstance(v, dict) else None
                if value is None:
                    return None
                key = item_key("context_statement", i, node)
                text_of = v.get("statement")
                items.append([key, str(text_of) if text_of is not None else "", f"node {node}"])
                values[key] = value
        return items, values, None
    ambiguous = slug in ("faithfulness", "answer_relevancy")  # YesNoBorderline schemas
    words = [verdict(v.get("verdict"), ambiguous) for v in verdicts]
    if any(w is None for w in words):
        return None
    if slug == "contextual_precision":
        if len(words) > nodes:  # a verdict for a node the test case does not have
            return None
        nodes_of = [[context_key(i), f"node {i}", None] for i in range(len(words))]
        return nodes_of, {context_key(i): str(w) for i, w in enumerate(words)}, None
    kind_name = METRICS[slug][2]
    texts: list[str] | None = None
    truths = None
    if slug == "faithfulness":
        texts = logs.strings(found.get("Claims", "[]"))
        truths = logs.strings(found.get("Truths", "[]"))
    elif slug == "answer_relevancy":
        texts = logs.strings(found.get("Statements", "[]"))
    elif isinstance(expected, str):  # the judge's split is not in the file; ours if it fits
        split = [s for _, s in keyed_response(expected)]
        texts = split if len(split) == len(words) else None
    for i, w in enumerate(words):
        key = item_key(kind_name, i)
        if texts is not None and i < len(texts):
            shown = texts[i]
        elif slug == "contextual_recall":
            shown = f"sentence {i + 1} of the expected output"
        else:
            shown = f"item {i + 1} (its text is not in the file)"
        items.append([key, shown, None])
        values[key] = str(w)
    return items, values, truths


# -- writing back ------------------------------------------------------------------------


Reasons = Mapping[tuple[str, str], str]


def patch_case(
    case: dict[str, Any],
    item: ExportRecord,
    settings: Mapping[str, Any],
    reasons: Reasons,
) -> set[str]:
    """Patch one test case from the record's effective labels and the reviewers'
    reasons; the names of the metrics whose score changed."""
    eff = effective(item.judge, item.human)
    moved: set[str] = set()
    metrics_data = case.get("metricsData") or []
    for entry in metric_entries(item.record.data):
        keys = entry.get("keys")
        slug = entry.get("slug")
        if not isinstance(keys, list) or slug not in METRICS:
            continue
        metric = metrics_data[entry["index"]]
        label = METRICS[slug][1]
        new = [eff.get(label, {}).get(k) for k in keys]
        old = [item.judge.get(label, {}).get(k) for k in keys]
        given = [f"{k}: {reasons[(label, k)]}" for k in keys if (label, k) in reasons]
        if new != old:
            metric["verboseLogs"] = _relabelled(str(metric["verboseLogs"]), slug, new)
            value = metric_value(entry, eff, settings)
            if value is not None:
                if metric.get("score") != value:
                    moved.add(str(metric.get("name")))
                metric["score"] = value
                if entry.get("threshold") is not None and "success" in metric:
                    metric["success"] = value >= entry["threshold"]
        if given:
            metric.setdefault("judgeReason", metric.get("reason"))
            metric["reason"] = given[0] if len(given) == 1 else "\n".join(given)
    if moved and "success" in case:
        case["success"] = all(bool(m.get("success")) for m in metrics_data if isinstance(m, dict))
    return moved


def _spelled(new: Any, original: Any) -> Any:
    """The verdict word to write: the file's own where the value is unchanged (newer
    DeepEval's ``borderline`` stays), else the label's (``idk`` DeepEval reads as
    borderline)."""
    if verdict(original) == new:
        return original
    return new


def _relabelled(text: str, slug: str, values: list[Any]) -> str:
    verdicts = logs.objects(logs.steps(text).get("Verdicts", "")) or []
    flat = (
        [v for block in verdicts for v in block.get("verdicts", [])]
        if slug == "contextual_relevancy"
        else verdicts
    )
    for v, value in zip(flat, values, strict=False):
        if value is not None:
            v["verdict"] = _spelled(value, v.get("verdict"))
    return logs.replace_verdicts(text, verdicts)


def recount(run: dict[str, Any], names: set[str]) -> None:
    """The run's totals after test cases changed (DeepEval's
    ``calculate_test_passes_and_fails`` and ``construct_metrics_scores``, the latter
    for the metrics in ``names``)."""
    cases = [c for c in run.get("testCases") or [] if isinstance(c, dict)]
    if "testPassed" in run or "testFailed" in run:
        judged = [c["success"] for c in cases if c.get("success") is not None]
        run["testPassed"] = sum(1 for s in judged if s)
        run["testFailed"] = sum(1 for s in judged if not s)
    for block in run.get("metricsScores") or []:
        if not isinstance(block, dict) or block.get("metric") not in names:
            continue
        data = [
            m
            for c in cases
            for m in c.get("metricsData") or []
            if isinstance(m, dict) and m.get("name") == block["metric"]
        ]
        scored = [m for m in data if m.get("score") is not None and m.get("success") is not None]
        block["scores"] = [m["score"] for m in scored]
        block["passes"] = sum(1 for m in scored if m["success"])
        block["fails"] = sum(1 for m in scored if not m["success"])
        block["errors"] = len(data) - len(scored)


def dumps_like(doc: Any, original: str) -> str:
    """``doc`` written in the form of ``original``: DeepEval's own (``json.dump``
    defaults), else the indent and escaping the file used."""
    parsed = json.loads(original)
    end = original[len(original.rstrip()) :]
    for indent in (None, 4, 2):
        for ascii_only in (True, False):
            if json.dumps(parsed, indent=indent, ensure_ascii=ascii_only) == original.rstrip():
                return json.dumps(doc, indent=indent, ensure_ascii=ascii_only) + end
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write(items: Iterable[ExportRecord], out: TextIO, settings: dict[str, Any]) -> int:
    text = settings.get("source.document")
    if not text:
        raise InputError("deepeval", None, None, "the DeepEval test run was not stored at import")
    doc = json.loads(text)
    run, _ = _run(doc)
    cases = run["testCases"]
    reasons: Mapping[str, Reasons] = settings.get("export.reasons") or {}
    count, moved, exported = 0, set(), []
    for item in items:
        count += 1
        index = int((item.record.data.get("deepeval") or {}).get("case", -1))
        exported.append(index)
        why = reasons.get(item.record.id, {})
        if changed(item.judge, item.human) or why:
            moved |= patch_case(cases[index], item, settings, why)
    if settings.get("export.subset"):
        run["testCases"] = [cases[i] for i in sorted(set(exported))]
        moved |= {
            str(m.get("name"))
            for c in cases
            for m in c.get("metricsData") or []
            if isinstance(m, dict)
        }
        recount(run, moved)
    elif moved:
        recount(run, moved)
    out.write(dumps_like(doc, text))
    return count


def read_back(item: ExportRecord, settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The effective labels a re-import of the test case as written gives."""
    case = json.loads(item.source or "{}")
    patch_case(case, item, settings, {})
    index = int((item.record.data.get("deepeval") or {}).get("case", 0))
    return reread(draft(case, index, 1))
