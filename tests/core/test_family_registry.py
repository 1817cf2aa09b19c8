"""The families' registry (``core.families``) is the one source of which records a
family owns, its labels and its settings; the built-in families' declarations
(ragreview/families/) give exactly what the code before them hard-wired."""

from __future__ import annotations

import pytest

from ragreview.core import families as fam
from ragreview.core.families import FAMILIES, Family, metric_families, task_family
from ragreview.core.labels import CATALOGUE, LabelSpec
from ragreview.core.metrics import deepeval, longform, mtrag, ragas, ragchecker, rgb, trace
from ragreview.core.record import parse_record

# the tasks ragreview's own readers write, and the family each names (before the
# registry: KNOWN_TASKS in core.metrics, label_items.task_family)
TASKS = {
    "trace": "trace",
    "rgb-noise": "rgb",
    "rgb-negative": "rgb",
    "rgb-integration": "rgb",
    "rgb-counterfactual": "rgb",
    "mtrag": "mtrag",
    "longform": "longform",
    "ragas": "ragas",
    "deepeval": "deepeval",
    "ragchecker": "ragchecker",
}


@pytest.mark.parametrize("task,family", TASKS.items())
def test_each_known_task_names_its_family(task: str, family: str) -> None:
    assert getattr(task_family(task), "name", None) == family


@pytest.mark.parametrize("task", [None, "", "rag", "qa", "free"])
def test_other_tasks_name_no_family(task: str | None) -> None:
    assert task_family(task) is None


def test_each_family_declares_the_labels_its_metrics_read() -> None:
    modules = {
        "trace": trace,
        "rgb": rgb,
        "mtrag": mtrag,
        "longform": longform,
        "ragas": ragas,
        "deepeval": deepeval,
        "ragchecker": ragchecker,
    }
    for family in FAMILIES:
        names = tuple(s.name for s in family.catalogue)
        assert all(s.family == family.name for s in family.catalogue)
        if family.name in modules:
            assert set(names) == set(modules[family.name].LABELS), family.name
            assert family.compute is modules[family.name].metrics


def test_the_catalogue_is_the_families_labels_in_order() -> None:
    assert list(CATALOGUE) == [s.name for f in FAMILIES for s in f.catalogue]


def _record(**data):
    return parse_record({"id": "r", "question": "q", **data})


def test_a_record_of_no_known_task_gets_the_families_it_carries_labels_of() -> None:
    free = _record(task="qa", response=[["a", "An answer."]])
    assert metric_families(free, {}) == []
    names = [f.name for f in metric_families(free, {"rejected": {"*": True}, "idk": {"*": 1}})]
    assert names == ["rgb", "mtrag"]
    # a known task: its own family only, whatever the labels
    own = _record(task="mtrag", response=[["a", "An answer."]])
    assert [f.name for f in metric_families(own, {"rejected": {"*": True}})] == ["mtrag"]


def test_register_and_unregister_a_family() -> None:
    toy = Family(
        "toyfam",
        "Toy",
        keys=(),
        item_labels={},
        verdicts=("toyfam_ok",),
        catalogue=(LabelSpec("toyfam_ok", "record", "bool", "toyfam", "toy verdict"),),
    )
    fam.register(toy)
    try:
        assert task_family("toyfam") is toy
        assert CATALOGUE["toyfam_ok"].family == "toyfam"
        assert fam.family_of_label("toyfam_ok") is toy
        with pytest.raises(ValueError, match="registered already"):
            fam.register(toy)
    finally:
        fam.unregister("toyfam")
    assert task_family("toyfam") is None and "toyfam_ok" not in CATALOGUE


def test_a_label_declared_twice_is_refused() -> None:
    twice = Family(
        "twice",
        "Twice",
        keys=(),
        item_labels={},
        catalogue=(LabelSpec("relevant", "doc", "bool", "twice", "again"),),
    )
    with pytest.raises(ValueError, match="declared by two families"):
        fam.register(twice)
    assert "twice" not in fam.BY_NAME
