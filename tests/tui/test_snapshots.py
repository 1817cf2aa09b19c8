"""Three SVG snapshots at 80×24 of what a reviewer sees (the compact metrics panel);
regenerate with --snapshot-update after a Textual bump."""

from __future__ import annotations

from .conftest import make_app


def test_first_screen_with_an_override(demo, snap_compare):
    # covid-1: r on 0a (judge relevant) -> overridden and disagreeing; cursor then on 0b
    assert snap_compare(make_app(demo, panel="compact"), press=["r", "j"], terminal_size=(80, 24))


def test_markup_record_is_literal(demo, snap_compare):
    assert snap_compare(make_app(demo, panel="compact"), press=["n", "n"], terminal_size=(80, 24))


def test_blind_pass_hides_judge_labels(demo, snap_compare):
    assert snap_compare(
        make_app(demo, blind=True, panel="compact"), press=["r"], terminal_size=(80, 24)
    )
