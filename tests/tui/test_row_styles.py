"""The rows' part styles (key, marks, muted text) are resolved once per row state and
shared (issue 27: as Textual component classes they cost seven style applications per
row on every restyle). What a row shows must not change: the part's colour over the
row's own background, and a new theme's colours after the theme changes."""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region

from .conftest import make_app


def key_style(row) -> Style:
    """The style the row's key (``0a``) is drawn with on screen."""
    width, height = row.outer_size
    for strip in row.render_lines(Region(0, 0, width, height)):
        for segment in strip:
            if segment.text.strip() == row.item.key:
                assert segment.style is not None
                return segment.style
    raise AssertionError(f"key {row.item.key} not drawn")


async def test_a_row_draws_its_parts_over_its_own_background_in_the_current_theme(demo):
    app = make_app(demo)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        rows = app.screen.sentences.rows
        first, second = rows[0], rows[1]  # the same labels; the cursor on the first
        assert first.classes - {"-cursor"} == second.classes and first.has_class("-cursor")
        under_cursor, elsewhere = key_style(first), key_style(second)
        # the muted key colour blended over each row's own background
        assert under_cursor.bgcolor != elsewhere.bgcolor
        assert under_cursor.color != elsewhere.color
        # the cursor moves: the rows swap backgrounds, their parts follow
        await pilot.press("j")
        await pilot.pause()
        assert second.has_class("-cursor") and not first.has_class("-cursor")
        assert (key_style(first), key_style(second)) == (elsewhere, under_cursor)
        plain = next(r for r in rows if r.classes == {"-doc"})
        dark = key_style(plain)
        app.theme = "textual-light"
        await pilot.pause()
        assert key_style(plain).color != dark.color  # no style kept from the old theme
