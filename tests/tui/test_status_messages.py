"""Every action says what it did on the status line, and the message stays until the
next key: label keys, ⌫ on the verdict under the verdict cursor, X (asks first), undo
and redo — on the real MT-RAG fixture."""

from __future__ import annotations

from ragreview.tui.screens.prompt import PromptScreen
from ragreview.tui.widgets.verdict_bar import VerdictBar

from .conftest import human, make_app, text_of
from .test_families import FIXTURES, imported, status

RID = "dd6b6ffd177f2b311abe676261279d2f::1"


async def test_revert_undo_redo_and_revert_record_say_what_they_did(tmp_path):
    o = imported(tmp_path, FIXTURES / "mtrag" / "responses-10.jsonl")
    app = make_app(o)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("i")  # idk: – → 0
        await pilot.pause()
        assert status(app).strip() == "idk: 0 (⌫ reverts)"
        await pilot.press("a")  # answerability: UNANSWERABLE → the next value
        await pilot.pause()
        assert status(app).strip().startswith("answerability: ")
        assert "▸answer" in text_of(app.screen.query_one(VerdictBar))  # the verdict cursor
        assert {k[1] for k in human(o)} == {"idk", "answerability"}

        await pilot.press("backspace")  # the verdict under the cursor only
        await pilot.pause()
        assert {k[1] for k in human(o)} == {"idk"}
        assert status(app).strip() == "reverted your answerability to the judge's (^z undoes)"
        await pilot.pause(0.3)  # no timer clears it: it stays until the next key
        assert "reverted your answerability" in status(app)

        await pilot.press("ctrl+z")
        await pilot.pause()
        assert {k[1] for k in human(o)} == {"idk", "answerability"}
        assert status(app).strip().startswith(f"undone: answerability * on {RID} (now ")
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert status(app).strip() == f"redone: answerability * on {RID} (now the judge's)"
        await pilot.press("j")  # any key ends the message
        await pilot.pause()
        assert status(app).strip() == ""

        await pilot.press("a", "X")  # the whole record: asks first
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert status(app).strip() == "record not reverted"
        assert {k[1] for k in human(o)} == {"idk", "answerability"}
        await pilot.press("X", "y", "enter")
        await pilot.pause()
        assert human(o) == {}
        assert status(app).strip() == f"reverted 2 labels of {RID} to the judge's (^z × 2 undoes)"
