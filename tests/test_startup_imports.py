"""What loads before the review screen's first frame and in one ``label`` / ``mark`` call
(issue 27: the first screen at most 2x a bare Textual app; one call's start-up at most
0.2 s CPU). Each runs in a fresh interpreter: this test process has imported everything.

A module named here is one the first frame or the command does not use; if a change
needs it there, it moves out of these lists on purpose, with its cost measured
(bench/tui_bench.py, bench/startup_bench.py). The same holds for the dataclasses a
command builds (``COMMAND_DATACLASSES``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, subprocess_env

DEMO = REPO_ROOT / "fixtures" / "demo.jsonl"

# loaded by neither the first frame nor label / mark
NEVER_AT_START = (
    "sqlite_utils",  # the store's handle needs no sqlite-utils unless a migration runs
    "pluggy",
    "pandas",
    "numpy",
    "ragreview.formats",
    "ragreview.services.importing",
    "ragreview.services.export",
    "ragreview.services.judge",
    "ragreview.core.where",
    "ragreview.services.queue_draws",
    "ragreview.core.annotator_agreement",
    "ragreview.store.reviewer_layers",
    "hashlib",  # (OpenSSL) hashes are made by imports and judge runs
    # an import's own types, and a draw's read: each built its dataclass at every start
    "ragreview.core.import_items",
    "ragreview.store.import_summary",
    "ragreview.store.record_order",
    "ragreview.store.event_reads",  # (log, and what an undo did)
)
# loaded by the first change (a label key, a note, an undo), not by the first frame
ON_FIRST_CHANGE = (
    "ragreview.services.labels",
    "ragreview.store.history",
    "ragreview.store.item_edits",
)
# not in a label / mark call (the TUI has them: Textual itself imports shutil and secrets)
NOT_IN_A_COMMAND = (
    "secrets",  # a new DB's temporary name only
    "shutil",  # a full disk's message only
    "string",  # (MT-RAG's punctuation is spelled out; Textual imports it)
    "textual",
    "ragreview.tui",
    # the guideline rules and their parser's regexes: only a change that names a rule
    # (the review screen shows the rules)
    "ragreview.store.guidelines",
    "ragreview.core.guidelines",
)
# not in the TUI (a command's parser: the review screen was loading it with sqlite-utils)
NOT_IN_THE_TUI = ("click",)
# loaded by the key that opens them
ON_THEIR_KEY = (
    "ragreview.tui.screens.prompt",
    "ragreview.tui.screens.help",
    "ragreview.tui.screens.guidelines",
)

FIRST_FRAME = """
import asyncio, json, sys
from ragreview.store import open_database
from ragreview.tui.app import RagreviewApp

app = RagreviewApp(open_database(sys.argv[1]), "demo", "alice")
seen = {}
display = app._display

def shown():
    screen = app.screen
    review = getattr(screen, "review", None)
    return (review is not None and review.stored is not None
            and bool(screen.sentences.rows) and screen.sentences.rows[0].region.height > 0)

def timed_display(screen, renderable):  # every frame (as bench/tui_bench.py times it)
    display(screen, renderable)
    if renderable is not None and "frame" not in seen and shown():
        seen["frame"] = sorted(sys.modules)

app._display = timed_display

async def main():
    async with app.run_test(size=(80, 24)) as pilot:
        while "frame" not in seen:
            await pilot.pause(0.01)
        await pilot.pause()
        seen["idle"] = sorted(sys.modules)
        await pilot.press("r")  # a label key: the writes load with it
        await pilot.pause()
        seen["labelled"] = [app.screen.review.stored.human, sorted(sys.modules)]

asyncio.run(main())
print(json.dumps(seen))
"""

COMMAND = """
import gc, json, runpy, sys
sys.argv = ["ragreview", *sys.argv[1:]]
try:
    runpy.run_module("ragreview", run_name="__main__")
except SystemExit as done:
    assert not done.code, done.code
built = [  # the dataclasses the call's modules define (each costs ~1-2 ms to build)
    f"{name}.{k}" for name, module in list(sys.modules.items()) if name.startswith("ragreview")
    for k, v in vars(module).items()
    if isinstance(v, type) and v.__module__ == name and "__dataclass_fields__" in vars(v)
]
print(json.dumps([sorted(sys.modules), sorted(built), gc.get_freeze_count()]))
"""

# The dataclasses a label / mark call builds: creating one runs exec() on each generated
# method, 2-4 M instructions a class, the largest part of the call's start beyond the
# floor (issue 27). One that moves in here is one the command needs, measured.
COMMAND_DATACLASSES = [
    "ragreview.core.families.Family",
    "ragreview.core.families.KeyUse",
    "ragreview.core.families.Variant",
    "ragreview.core.labels.LabelSpec",
    "ragreview.core.record.Document",
    "ragreview.core.record.Fact",
    "ragreview.core.record.Record",
    "ragreview.core.record.Turn",
    "ragreview.services.opening.Opened",
    "ragreview.services.opening.Target",
    "ragreview.store.records.StoredRecord",
]


def _loaded(found: list[str], names: tuple[str, ...]) -> list[str]:
    return [n for n in names if any(m == n or m.startswith(n + ".") for m in found)]


@pytest.fixture
def demo_db(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    shutil.copy(DEMO, path)
    env = subprocess_env(tmp_path)
    subprocess.run([sys.executable, "-m", "ragreview", "import", str(path)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    return path.with_name("demo.ragreview.db")


def _run(tmp_path: Path, code: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=subprocess_env(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_the_first_frame_loads_only_what_it_draws(tmp_path, demo_db) -> None:
    seen = json.loads(_run(tmp_path, FIRST_FRAME, str(demo_db)))
    later = NEVER_AT_START + NOT_IN_THE_TUI + ON_FIRST_CHANGE + ON_THEIR_KEY
    assert _loaded(seen["frame"], later) == []
    assert _loaded(seen["idle"], later) == []
    human, labelled = seen["labelled"]
    assert human == {"relevant": {"0a": False}}  # the key's label is on disk
    assert _loaded(labelled, ON_FIRST_CHANGE) == list(ON_FIRST_CHANGE)


@pytest.mark.parametrize(
    "command",
    [
        ("label", "covid-1", "relevant", "0a", "false", "--reviewer", "bob"),
        ("mark", "covid-1", "--reviewed", "--reviewer", "bob"),
    ],
    ids=["label", "mark"],
)
def test_label_and_mark_load_no_more_than_their_work(tmp_path, demo_db, command) -> None:
    found, built, frozen = json.loads(
        _run(tmp_path, COMMAND, command[0], str(demo_db), *command[1:])
    )
    assert _loaded(found, NEVER_AT_START + NOT_IN_A_COMMAND) == []
    assert "ragreview.store.history" in found  # (the command did run)
    assert built == COMMAND_DATACLASSES
    # what the command imported is left out of the collector's walks (cli.Group)
    assert frozen > 10_000


def test_only_the_process_entry_point_freezes_the_collector(tmp_path, demo_db) -> None:
    # a program that calls the CLI and goes on (click's CliRunner) keeps its collector
    code = (
        "import gc, sys\n"
        "from click.testing import CliRunner\n"
        "from ragreview.cli import cli\n"
        "out = CliRunner().invoke(cli, ['mark', sys.argv[1], 'covid-1', '--reviewed'])\n"
        "print(out.exit_code, gc.get_freeze_count())"
    )
    assert _run(tmp_path, code, str(demo_db)) == "0 0"
