"""Bindings, palette and the virtual list."""

from __future__ import annotations

import re

from ragreview.tui.actions import ACTIONS
from ragreview.tui.screens.review import ReviewScreen
from ragreview.tui.widgets.record_list import RecordList

from .conftest import human, make_app, opened, text_of, write_records


def test_every_binding_has_a_unique_kebab_case_id_and_a_namespaced_title():
    ids = [b.id for b in ReviewScreen.BINDINGS]
    assert len(ids) == len(set(ids)) == len(ACTIONS)
    for binding_id in ids:
        assert binding_id and re.fullmatch(r"[a-z]+(-[a-z]+)*", binding_id)
    for action in ACTIONS:
        assert re.fullmatch(r"[a-z]+: [A-Z].*", action.palette_title)
    keys = {b.key for b in ReviewScreen.BINDINGS}
    for key in ("r", "u", "s", "l", "f", "x", "e", "i", "a", "backspace", "space", "n", "p"):
        assert key in keys
    for key in ("right_square_bracket", "slash", "ctrl+z", "ctrl+y", "m", "b", "ctrl+e"):
        assert key in keys


async def test_command_palette_runs_a_label_command(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "label: Toggle relevant" in titles and "view: Leave blind mode" in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"label: Toggle relevant")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert human(demo) == {("covid-1", "relevant", "0a"): False}


async def test_list_is_virtual_and_draws_rows_far_down(tmp_path):
    records = [
        {
            "id": f"rec-{i:05d}",
            "task": "trace",
            "documents": [{"sentences": [["0a", f"Sentence {i}."]]}],
            "response": [["a", "Answer."]],
        }
        for i in range(3000)
    ]
    o = opened(write_records(tmp_path, records))
    app = make_app(o)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # the rest of the list is read in a thread (load_rest): wait for it, not for idle
        await app.workers.wait_for_complete()
        await pilot.pause()
        lst = app.screen.query_one(RecordList)
        assert len(lst.ids) == 3000 and not lst.children
        await pilot.press("p")  # already at the start: stays on the first record
        await pilot.pause()
        assert app.screen.review.stored.id == "rec-00000"
        lst.scroll_end(animate=False)
        await pilot.pause()
        assert "rec-02999" in text_of(lst)
        assert len(lst._pages) <= 3  # only the pages drawn were fetched


async def test_q_quits_with_labels_already_saved(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("r", "q")
        await pilot.pause()
        assert not app.is_running
    assert human(demo) == {("covid-1", "relevant", "0a"): False}


def test_review_model_and_list_queries_load_no_textual(tmp_path):
    """What the screen does is testable (and usable) without the UI."""
    import json
    import subprocess
    import sys

    from tests.conftest import subprocess_env

    code = (
        "import sys, json; import ragreview.tui.model, ragreview.store.browse; "
        "print(json.dumps([m for m in ('textual', 'click') if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=subprocess_env(home=tmp_path),
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_delta_shows_tiny_dataset_moves_and_hides_float_noise():
    from ragreview.tui.widgets.metrics_panel import delta

    assert delta(0.25, 0.5) == "+0.250"
    assert delta(1.0, 0.0) == "-1.000"
    # one label among 100,000 records: fixed-point like every other number in the panel
    assert delta(0.071, 0.071 + 2.2e-7) == "+0.0000002"
    assert delta(0.0, -6e-05) == "-0.00006"
    assert delta(3, 4, count=True) == "+1"  # a count moves by whole numbers
    assert delta(0.5, 0.5 + 1e-15) == ""  # running-sum rounding, not a change
    assert delta(None, 0.5) == ""
