"""Pilot tests of the guidelines keys (docs/align.md): ``H`` shows the dataset's
guidelines literally, ``T`` names the rule a correction applies, written before the
row shows it, carried by undo and redo and into the export."""

from __future__ import annotations

import json

from ragreview.core.guidelines import parse_rules
from ragreview.store import guidelines
from ragreview.tui.screens.guidelines import GuidelinesScreen, RulePicker
from ragreview.tui.widgets.verdict_bar import VerdictBar

from .conftest import make_app, text_of
from .test_families import status

# untrusted text: Rich markup and an escape sequence that would clear the screen
GUIDELINES = (
    "# Review guidelines [bold red]loud[/]\n\n"
    "- **R1**: a sentence counts as relevant only when it helps answer the question.\n"
    "- **R2**: hedged sentences are not supported \x1b[2J at all.\n"
)


def _rules(o, rid: str) -> dict:
    rowid = o.db.conn.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchone()[0]
    return guidelines.label_rules(o.db, rowid)


def flat(widget) -> str:
    """A widget's text on one line (a row wraps where the width says)."""
    return " ".join(text_of(widget).replace("▌", " ").split())


def _rule_events(o) -> list[tuple]:
    return o.db.conn.execute(
        "SELECT e.kind, e.name, e.target, e.new, e.rule FROM events e ORDER BY e.id"
    ).fetchall()


async def test_h_shows_the_guidelines_literally_with_their_rule_ids(demo):
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("H")  # none attached yet: says how
        await pilot.pause()
        assert not isinstance(app.screen, GuidelinesScreen)
        assert "no guidelines for this dataset" in status(app)
    guidelines.store(demo.db, demo.dataset, GUIDELINES, None)
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("H")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, GuidelinesScreen)
        assert "rules: R1, R2" in text_of(screen.query_one("#guidelines-rules"))
        shown = text_of(screen.query_one("#guidelines-text"))
        assert "# Review guidelines [bold red]loud[/]" in shown  # as typed, not markup
        assert "not supported  at all" in shown and "\x1b" not in shown  # sequence gone
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, GuidelinesScreen)


async def test_t_tags_the_correction_with_a_rule_through_undo_redo_and_export(demo, tmp_path):
    guidelines.store(demo.db, demo.dataset, GUIDELINES, None)
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("T")  # no label of the reviewer's under the cursor yet
        await pilot.pause()
        assert not isinstance(app.screen, RulePicker)
        assert "no label of yours here" in status(app)

        await pilot.press("r")  # 0a: relevant -> not relevant, a correction
        await pilot.pause()
        await pilot.press("T")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, RulePicker)
        options = [str(picker.query_one("#rule-options").get_option_at_index(i).prompt)
                   for i in range(2)]  # fmt: skip
        assert options[0].startswith(" R1   a sentence counts as relevant")
        assert "\x1b" not in options[1]
        await pilot.press("down", "enter")  # R2
        await pilot.pause()
        assert not isinstance(app.screen, RulePicker)
        # committed before the row shows it
        assert _rules(demo, "covid-1") == {("relevant", "0a"): "R2"}
        assert _rule_events(demo)[-1] == ("set", "relevant", "0a", "false", "R2")
        row = app.screen.sentences.rows[0]
        assert "rule R2 (relevant)" in flat(row)
        assert status(app).strip() == "relevant 0a: rule R2 (^z undoes)"

        await pilot.press("T")  # the picker opens on the rule in force
        await pilot.pause()
        assert app.screen.query_one("#rule-options").highlighted == 1
        await pilot.press("up", "enter")  # R1 now, the value unchanged
        await pilot.pause()
        assert _rules(demo, "covid-1") == {("relevant", "0a"): "R1"}
        assert "rule R1 (relevant)" in flat(row)

        await pilot.press("ctrl+z")  # undo the re-tag: R2 again, same value
        await pilot.pause()
        assert _rules(demo, "covid-1") == {("relevant", "0a"): "R2"}
        assert "rule R2 (relevant)" in flat(row)
        assert status(app).strip() == "undone: relevant 0a on covid-1 (now false, rule R2)"
        await pilot.press("ctrl+z")  # undo the tag: no rule
        await pilot.pause()
        assert _rules(demo, "covid-1") == {}
        assert "rule R" not in flat(row)
        await pilot.press("ctrl+y", "ctrl+y")
        await pilot.pause()
        assert _rules(demo, "covid-1") == {("relevant", "0a"): "R1"}
        assert "rule R1 (relevant)" in flat(row)
        assert status(app).strip() == "redone: relevant 0a on covid-1 (now false, rule R1)"

        await pilot.press("ctrl+e")  # the demo's source format is ragreview's own
        await app.workers.wait_for_complete()
        await pilot.pause()
    out = tmp_path / "demo.reviewed.jsonl"
    lines = {o["id"]: o for o in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert lines["covid-1"]["labels"]["human"] == {"relevant": {"0a": False}}
    assert lines["covid-1"]["labels"]["rules"] == {"relevant": {"0a": "R1"}}
    assert parse_rules(GUIDELINES)["R1"].startswith("a sentence counts")


async def test_t_on_a_verdict_shows_the_rule_in_the_verdict_bar(tmp_path):
    from .test_families import FIXTURES, imported

    o = imported(tmp_path, FIXTURES / "mtrag" / "responses-10.jsonl")
    guidelines.store(o.db, o.dataset, GUIDELINES, None)
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("i", "T", "enter")  # idk: – -> 0, then rule R1
        await pilot.pause()
        assert "rule R1" in text_of(app.screen.query_one(VerdictBar))
        assert [r for (n, _), r in _rules(o, app.screen.review.stored.id).items()] == ["R1"]


async def test_t_says_so_when_the_guidelines_define_no_rules(demo):
    guidelines.store(demo.db, demo.dataset, "# Guidelines\n\nBe careful.\n", None)
    app = make_app(demo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("r", "T")
        await pilot.pause()
        assert not isinstance(app.screen, RulePicker)
        assert "the guidelines define no rules" in status(app)
        await pilot.press("H")  # the pane still shows them
        await pilot.pause()
        assert "rules: none" in text_of(app.screen.query_one("#guidelines-rules"))
