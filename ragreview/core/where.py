"""The record filter a reviewer types: ``field=value`` terms (and plain words, a text
search), read the same way by the review screen's ``/`` and ``ragreview queue --where``.

    model=gpt turn=3                 source fields (the record's, else its source row's)
    answerability=UNANSWERABLE       (case-insensitive; ``!=`` negates)
    judge.supported=false            a label the judge gave on some item of the record
    human.fact=IR                    a label the reviewer set
    annotator.faithfulness=1         a value one of the file's annotators gave (InspectorRAGet)
    fact=IR                          the label in force (the reviewer's, else the judge's;
                                     a record without the label: its field of that name)

Terms are joined with AND. A value may be quoted (``dataset="MT-RAG Authors"``).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from .errors import RagreviewError
from .labels import CATALOGUE

LAYERS = ("judge", "human", "annotator")
# Source fields with a name of their own; any other name that is not a label is looked
# up as a field of the record and of its source row all the same.
FIELDS = ("model", "turn", "answerability", "dataset", "collection", "task", "id")
TRUE = {"true", "yes", "y", "1"}
FALSE = {"false", "no", "n", "0"}
TERM = re.compile(r"^(?P<field>[A-Za-z_][\w.\-]*)\s*(?P<op>!=|=)(?P<value>.*)$", re.S)


@dataclass(frozen=True)
class Condition:
    field: str  # a source field, or a label name
    value: str
    negate: bool = False
    layer: str | None = None  # "judge" / "human" for a label; "effective"; None: a field

    @property
    def is_label(self) -> bool:
        return self.layer is not None

    def describe(self) -> str:
        name = self.field if self.layer in (None, "effective") else f"{self.layer}.{self.field}"
        return f"{name}{'!=' if self.negate else '='}{self.value}"


@dataclass(frozen=True)
class Query:
    conditions: tuple[Condition, ...] = ()
    text: str | None = None  # the plain words: a substring of the id or the text


def parse(expression: str) -> Query:
    """``field=value`` terms and plain words; a bad term raises ``RagreviewError``
    saying which and why."""
    try:
        words = shlex.split(expression)
    except ValueError as err:  # an unclosed quote
        raise RagreviewError(f"filter {expression!r}: {err}") from None
    conditions: list[Condition] = []
    text: list[str] = []
    for word in words:
        match = TERM.match(word)
        if match is None:
            text.append(word)
            continue
        field, op, value = match["field"], match["op"], match["value"].strip()
        if not value:
            raise RagreviewError(f"filter term {word!r}: no value after {op}")
        conditions.append(_condition(field, value, op == "!="))
    return Query(tuple(conditions), " ".join(text) or None)


def _condition(field: str, value: str, negate: bool) -> Condition:
    layer: str | None = None
    head, _, rest = field.partition(".")
    if rest and head in LAYERS:
        layer, field = head, rest
    elif field in CATALOGUE:
        # the label in force; a record without that label: its field of the same name
        # (InspectorRAGet's answerability is a field, MT-RAG's a label)
        layer = "effective"
    return Condition(field, value, negate, layer)


def label_value(value: str) -> str | float | bool:
    """A typed label value: booleans and numbers as such, else the text (``IR``)."""
    low = value.lower()
    if low in TRUE - {"1"}:
        return True
    if low in FALSE - {"0"}:
        return False
    try:
        return float(value)
    except ValueError:
        return value


def json_text(value: str | float | bool) -> str:
    return json.dumps(value, ensure_ascii=False)
