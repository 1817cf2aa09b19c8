"""The cursor stops of the record view: a record's keyed sentences, facts, statements,
parts, DeepEval's verdict items and RAGChecker's claim × chunk cells, in display order,
each with the heading it is shown under."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import deepeval_items
from ..core.keys import cell_key, context_key
from ..core.labels import CATALOGUE
from ..core.record import Record

KIND_NAMES = {
    "doc": "document sentences",
    "response": "response sentences",
    "fact": "facts",
    "statement": "statements",
    "reference_statement": "reference statements",
    "part": "answer parts",
    "record": "the record",
    "claim": "claims",
    "answer_statement": "output statements",
    "context_statement": "node statements",
    "expected_sentence": "expected-output sentences",
    "statement_chunk": "a response claim's chunks",
    "reference_statement_chunk": "a ground-truth claim's chunks",
}
# DeepEval's verdict items (core.deepeval_items), with the heading each is shown under
DEEPEVAL_SECTIONS = {
    "claim": "claims · Faithfulness",
    "answer_statement": "statements · Answer Relevancy",
    "context_statement": "node statements · Contextual Relevancy",
    "expected_sentence": "expected output · Contextual Recall",
}
# claim x chunk cells (RAGChecker) follow their claim: cursor stops drawn on its row
CELL_OF = {"statement_chunk": "statement", "reference_statement_chunk": "reference_statement"}
CELL_TEXT = 40  # characters of the chunk under the claim's strip (whole in the documents)


@dataclass(frozen=True)
class Item:
    """One cursor stop in the record view: a keyed sentence, fact, statement or part."""

    kind: str
    key: str
    text: str
    section: str  # heading the item is shown under
    extra: str | None = None  # e.g. the response sentence a fact came from
    doc: int | None = None  # index of the document a document sentence belongs to

    def target(self, name: str) -> str:
        """The label's target for this item: the sentence key, or for a context-level
        label (ragas ``context_useful``) the key ``c<i>`` of the sentence's document."""
        if CATALOGUE[name].target in ("context", "node") and self.doc is not None:
            return context_key(self.doc)
        return self.key


def items_of(rec: Record, first: tuple[str, ...] = (), cells: bool = False) -> list[Item]:
    """Cursor stops in display order: the kinds in ``first`` (what the record's family
    labels), then documents, response, answer parts, facts, statements. With ``cells``
    (RAGChecker) each claim is followed by one stop per retrieved chunk (``s1/c0``)."""
    out: list[Item] = []
    for i, doc in enumerate(rec.documents):
        section = f"doc {i}" + (f" · {doc.title}" if doc.title else "")
        out.extend(Item("doc", k, t, section, doc=i) for k, t in doc.sentences)
    out.extend(Item("response", k, t, "response") for k, t in rec.response)
    out.extend(
        Item("part", f"p{i}", " | ".join(p), "answer parts") for i, p in enumerate(rec.answer_parts)
    )
    out.extend(Item("fact", f.key, f.text, "facts", f.sentence) for f in rec.facts)
    if cells:
        out.extend(_claims_and_cells(rec))
    else:
        out.extend(Item("statement", k, t, "statements") for k, t in rec.statements)
        out.extend(
            Item("reference_statement", k, t, "reference statements")
            for k, t in rec.reference_statements
        )
    for kind, section in DEEPEVAL_SECTIONS.items():
        out.extend(
            Item(kind, str(e[0]), str(e[1]), section, e[2] if len(e) > 2 else None)
            for e in deepeval_items.entries(rec.data, kind)
        )
    rank = {kind: i for i, kind in enumerate(first)}
    # (stable: a cell stays under its claim)
    return sorted(out, key=lambda item: rank.get(CELL_OF.get(item.kind, item.kind), len(rank)))


def _claims_and_cells(rec: Record) -> list[Item]:
    out = []
    # each chunk's start once: Document.text joins its sentences on every call
    chunks = [_cut(doc.text) for doc in rec.documents]
    for kind, claims, section in (
        ("statement", rec.statements, "response claims"),
        ("reference_statement", rec.reference_statements, "ground-truth claims"),
    ):
        for key, text in claims:
            out.append(Item(kind, key, text, section))
            for c, chunk in enumerate(chunks):
                out.append(Item(f"{kind}_chunk", cell_key(key, c), chunk, section))
    return out


def _cut(text: str) -> str:
    return text if len(text) <= CELL_TEXT else text[: CELL_TEXT - 1] + "…"
