"""docs/contributing.md's "Add a format", followed: the toy format (toy_format.py, one
module) is registered as the recipe's second step says (listed in
``catalogue.ADAPTERS`` before ``native``), and a line of it is detected, imported,
overridden, exported and read back, through the library's one import and export path.
Nothing above ``formats/`` learns its name."""

from __future__ import annotations

import json

import pytest

import ragreview
from ragreview import formats
from ragreview.formats import catalogue
from ragreview.services import export

from . import toy_format
from .test_adapter_contract import check_adapter


@pytest.fixture
def registered(monkeypatch):
    """The recipe's step 2 (``ADAPTERS``, and the registry built from it), undone after."""
    native = list(catalogue.ADAPTERS).index(formats.native)
    adapters = (*catalogue.ADAPTERS[:native], toy_format, *catalogue.ADAPTERS[native:])
    monkeypatch.setattr(catalogue, "ADAPTERS", adapters)
    before = dict(catalogue.REGISTRY)  # (one dict: formats.REGISTRY is the same object)
    catalogue.REGISTRY.clear()
    catalogue.REGISTRY.update({a.NAME: a for a in adapters})
    yield toy_format
    catalogue.REGISTRY.clear()
    catalogue.REGISTRY.update(before)


LINE = {
    "toy_id": "q1",
    "answer": "Paris is the capital of France.",
    "claims": [{"text": "Paris is a capital", "ok": True}, {"text": "of Spain", "ok": True}],
}


def test_the_toy_format_declares_the_whole_protocol() -> None:
    check_adapter(toy_format)


def test_a_line_of_the_toy_format_imports_and_exports(tmp_path, registered) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text(json.dumps(LINE) + "\n")
    assert formats.detect(path) == "toy"
    assert "toy" in [row["format"] for row in catalogue.rows()]  # `ragreview formats`
    out = tmp_path / "claims.reviewed.jsonl"
    with ragreview.open(path) as ds:
        assert ds.errors == []
        ds.label("q1", "fact", "f2", "NS")  # the judge said S
        # the format holds the label: nothing lost, so the export does not refuse
        assert export.lost(ds.db, ds.name, "toy") == {}
        assert ds.export(out) == 1
    written = json.loads(out.read_text())
    assert [c["ok"] for c in written["claims"]] == [True, False]
    fmt, items = formats.read(out)
    (item,) = list(items)
    assert fmt == "toy" and item.record.id == "q1"
    assert item.judge == {"fact": {"f1": "S", "f2": "NS"}}  # the override came back


def test_unregistered_it_is_unknown(tmp_path) -> None:
    """(The fixture undoes its registration: the toy is no format of ragreview's.)"""
    assert "toy" not in formats.names()
