"""Every format is one module of ``formats/`` that declares the whole ``Adapter``
protocol (``formats/base.py``): its name, how ``ragreview formats`` lists it, its
traits, detection, reading, writing, ``read_back`` and its document view, each present
(``None`` where a format has no such part). mypy checks the same through
``catalogue.ADAPTERS: tuple[Adapter, ...]``; this test keeps it so at run time, and
keeps format names out of the layers above ``formats/`` (they ask the adapter)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from ragreview import formats
from ragreview.formats import catalogue
from ragreview.formats.base import Adapter, Listing, ReadContext, Traits
from tests.conftest import REPO_ROOT

PACKAGE = Path(formats.__file__).resolve().parent.parent
MEMBERS = sorted(name for name in vars(Adapter) if not name.startswith("_"))


def test_the_protocol_names_every_member() -> None:
    assert MEMBERS == sorted(
        ["NAME", "LISTING", "TRAITS", "sniff", "read", "write", "read_back", "document"]
    )


@pytest.mark.parametrize("adapter", catalogue.ADAPTERS, ids=lambda a: a.NAME)
def test_each_adapter_declares_every_member(adapter) -> None:
    check_adapter(adapter)


def check_adapter(adapter) -> None:
    """``adapter`` (a module) has every member of ``Adapter``, of the declared kind."""
    for member in MEMBERS:
        assert hasattr(adapter, member), f"{adapter.__name__} does not declare {member}"
    assert isinstance(adapter.NAME, str) and adapter.NAME
    assert isinstance(adapter.LISTING, Listing)
    assert isinstance(adapter.TRAITS, Traits)
    for member in ("sniff", "read", "write"):
        assert callable(getattr(adapter, member))
    for member in ("read_back", "document"):
        assert getattr(adapter, member) is None or callable(getattr(adapter, member))
    params = list(inspect.signature(adapter.read).parameters.values())
    assert [p.name for p in params[:3]] == ["path", "text", "ctx"]
    assert all(p.default is not p.empty for p in params[1:])  # read(path) reads quietly
    assert isinstance(params[2].default, ReadContext)


def test_the_registry_is_the_catalogue() -> None:
    names = [a.NAME for a in catalogue.ADAPTERS]
    assert len(set(names)) == len(names)
    assert formats.names() == names
    assert [row["format"] for row in catalogue.rows()] == names
    assert all(formats.adapter(n) is a for n, a in zip(names, catalogue.ADAPTERS, strict=True))


@pytest.mark.parametrize(
    "adapter", [a for a in catalogue.ADAPTERS if a.LISTING.field_sets], ids=lambda a: a.NAME
)
def test_a_record_with_one_field_set_comes_closest_to_its_format(adapter) -> None:
    """The listing's field sets are what a near miss is told it lacks: a record holding
    one set whole ranks its format first among those it shares fields with."""
    for fields in adapter.LISTING.field_sets:
        record = dict.fromkeys(fields, "x")
        found = dict(catalogue.closest([record], limit=len(catalogue.ADAPTERS)))
        assert found[adapter.NAME] == []


# Words that are format names and also name something else, where the layers above
# formats/ use them in that other sense: a task or family (records' ``task``, the judge's
# tasks, a TRACe variant), or the program itself. Per file, with the reason.
OTHER_SENSES = {
    "store/settings.py": {"ragbench"},  # the TRACe variant (trace.variant)
    "store/metric_stats_writes.py": {"ragbench"},  # the TRACe variant
    "store/migrations.py": {"ragreview"},  # the migration registry's name
    "services/judge/tasks.py": {"rgb"},  # a judge task
    "tui/app.py": {"ragreview"},  # the window title
    "cli/__init__.py": {"ragreview"},  # the program name (--version)
    "cli/judge.py": {"rgb"},  # a judge task
    "cli/align_cmd.py": {"rgb"},  # a judge task
}
# The names a format or export target goes by, and the two the grep adds.
FORMAT_NAMES = {
    *formats.names(),
    *catalogue.EXPORT_ONLY,
    *catalogue.LOOP_TARGETS,
    "native",
    "jsonl",
}


def _quoted_names(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in FORMAT_NAMES
    )


def test_no_format_name_outside_formats() -> None:
    """Callers ask the adapter (``TRAITS``, ``read_back``, ``document``) or the
    catalogue (``NATIVE``, ``CSV``, ``PARQUET``, ``LOOP_TARGETS``) instead of comparing
    names: a new format then needs no edit above ``formats/``."""
    files = [PACKAGE / "api.py"]
    for package in ("store", "services", "tui", "cli"):
        files += sorted((PACKAGE / package).rglob("*.py"))
    found = []
    for path in files:
        rel = path.relative_to(PACKAGE).as_posix()
        allowed = OTHER_SENSES.get(rel, set())
        found += [f"{rel}:{n}: {v!r}" for n, v in _quoted_names(path) if v not in allowed]
    assert found == []


def test_the_check_finds_a_quoted_name(tmp_path) -> None:
    path = tmp_path / "m.py"
    path.write_text('if fmt == "ragbench":\n    pass\nx = "ragbench data"\n')
    assert _quoted_names(path) == [(1, "ragbench")]


FIXTURES = sorted(
    p
    for p in (REPO_ROOT / "fixtures").rglob("*")
    if p.suffix in (".json", ".jsonl") and p.name != "results.jsonl"  # (a --map file)
)
# MetricAnnotation exports: sniffed by their samples' shape (ragas_annotations.sniff),
# which the listing's field sets do not spell out.
SHAPE_ONLY = {"annotated_data.json", "edited_chain_runs.json"}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_the_listing_names_the_fields_each_fixture_is_detected_by(path) -> None:
    """A format's ``LISTING.field_sets`` are not a second detection: they must hold for
    what ``sniff`` accepts. Each fixture's first records have one set of the format
    they are detected as, so a near miss of that format is told the right fields."""
    fmt = formats.detect(path)
    candidates = formats._head(path)[0]  # (the records detection looked at)
    found = dict(catalogue.closest(candidates, limit=len(catalogue.ADAPTERS)))
    if path.name in SHAPE_ONLY:
        assert fmt == "ragas"
        return
    assert found.get(fmt) == [], f"{path.name} is {fmt} but misses {found.get(fmt)}"
