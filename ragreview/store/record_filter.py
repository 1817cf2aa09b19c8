"""SQL for the record filter's ``field=value`` terms (``core.where``): source fields of
the stored record and its source row, label values of the judge's and the reviewer's
layers. One implementation below the review screen's ``/`` and ``queue --where``."""

from __future__ import annotations

from typing import Any

from ..core.where import Condition, json_text, label_value

# MT-RAG ids are ``<conversation>::<turn>`` or ``<conversation>::<turn>::<model>``.
_REST = "substr(r.id, instr(r.id, '::') + 2)"
_ID_TURN = (
    f"CASE WHEN instr(r.id, '::') > 0 THEN CASE WHEN instr({_REST}, '::') > 0 "
    f"THEN substr({_REST}, 1, instr({_REST}, '::') - 1) ELSE {_REST} END END"
)
_ID_MODEL = (
    f"CASE WHEN instr(r.id, '::') > 0 AND instr({_REST}, '::') > 0 "
    f"THEN substr({_REST}, instr({_REST}, '::') + 2) END"
)
# fields whose value, when neither the record nor its source row has it, the id gives
_FROM_ID = {"turn": _ID_TURN, "model": _ID_MODEL}
ALIASES = {"dataset": ("dataset", "collection"), "collection": ("collection", "Collection")}


def _json_path(name: str) -> str:
    return '$."' + name.replace('"', "") + '"'


def field_sql(name: str) -> tuple[str, list[Any]]:
    """The field's value as text: the stored record's, else the source row's (an older
    import's compacted source or a non-JSON one is skipped), else what the id says
    (turn, model)."""
    parts: list[str] = []
    params: list[Any] = []
    for key in ALIASES.get(name, (name,)):
        parts.append("json_extract(r.data, ?)")
        # (ragreview_source: a compressed source as its text; store.source_blob)
        parts.append(
            "CASE WHEN json_valid(ragreview_source(r.source)) "
            "THEN json_extract(ragreview_source(r.source), ?) END"
        )
        params += [_json_path(key), _json_path(key)]
    if name in _FROM_ID:
        parts.append(_FROM_ID[name])
    if name == "id":
        return "r.id", []
    return f"CAST(coalesce({', '.join(parts)}) AS TEXT)", params


def _value_match(column: str, value: str) -> tuple[str, list[Any]]:
    """A stored JSON label value equal to the typed one (text case-insensitively)."""
    typed = label_value(value)
    if isinstance(typed, bool) or isinstance(typed, str):
        return f"upper({column}) = upper(?)", [json_text(typed)]
    return f"(json_valid({column}) AND CAST(json_extract({column}, '$') AS REAL) = ?)", [typed]


def _label_exists(table: str, name: str, value: str) -> tuple[str, list[Any]]:
    match, params = _value_match("t.value", value)
    return (
        f"EXISTS (SELECT 1 FROM {table} t WHERE t.record = r.rowid AND t.name = ? AND {match})",
        [name, *params],
    )


def condition_sql(cond: Condition) -> tuple[str, list[Any]]:
    """A WHERE clause over ``records r`` for one term."""
    if cond.layer == "judge":
        clause, params = _label_exists("judge_labels", cond.field, cond.value)
    elif cond.layer == "human":
        clause, params = _label_exists("human_labels", cond.field, cond.value)
    elif cond.layer == "annotator":  # any of a file's annotators (InspectorRAGet)
        clause, params = _label_exists("reviewer_labels", cond.field, cond.value)
    elif cond.layer == "effective":
        human, hp = _label_exists("human_labels", cond.field, cond.value)
        match, mp = _value_match("j.value", cond.value)
        judge = (
            "EXISTS (SELECT 1 FROM judge_labels j WHERE j.record = r.rowid AND j.name = ? "
            f"AND {match} AND NOT EXISTS (SELECT 1 FROM human_labels h WHERE "
            "h.record = j.record AND h.name = j.name AND h.target = j.target))"
        )
        field, fp = field_sql(cond.field)
        labelled = (
            "(EXISTS (SELECT 1 FROM judge_labels x WHERE x.record = r.rowid AND x.name = ?) "
            "OR EXISTS (SELECT 1 FROM human_labels x WHERE x.record = r.rowid AND x.name = ?))"
        )
        clause = (
            f"CASE WHEN {labelled} THEN ({human} OR {judge}) "
            f"ELSE coalesce(lower({field}) = lower(?), 0) END"
        )
        params = [cond.field, cond.field, *hp, cond.field, *mp, *fp, cond.value]
    else:
        field, fp = field_sql(cond.field)
        clause, params = f"coalesce(lower({field}) = lower(?), 0)", [*fp, cond.value]
    if cond.negate:
        clause = f"NOT ({clause})"
    return clause, params
