"""core.safe_text: the one boundary between untrusted text and a terminal or a sheet."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ragreview.core.safe_text import csv_cell, json_for_terminal, printable, printable_all


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("a\x1b[2J\x1b[Hb", "ab"),  # clear screen, cursor home
        ("x\x1b]0;pwned\x07y", "xy"),  # OSC 0: window title, BEL-terminated
        ("x\x1b]52;c;ZXZpbA==\x1b\\y", "xy"),  # OSC 52: clipboard write, ST-terminated
        ("\x1b[31mred\x1b[0m", "red"),  # SGR colour
        ("\x9b31mred", "red"),  # 8-bit CSI
        ("it\x9b s", "it s"),  # a lone U+009B (mis-decoded "›") takes no text with it
        ("\x9d0;t\x9cz", "0;tz"),  # 8-bit OSC ... ST: the controls go, the text stays
        ("\x1bP1$r\x1b\\ok", "ok"),  # DCS
        ("lone\x1b", "lone"),
        ("nul\x00bel\x07bs\x08del\x7fnel\x85cr\r", "nulbelbsdelnelcr"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),  # kept
        ("é ünïcode 中文 😀 — ≠", "é ünïcode 中文 😀 — ≠"),  # printable text is untouched
        ("[bold red]x[/]", "[bold red]x[/]"),  # markup is not ours to strip: Text shows it
    ],
)
def test_printable_removes_control_and_escape_sequences(raw, shown):
    assert printable(raw) == shown


def test_one_line_turns_tabs_and_newlines_into_spaces():
    assert printable("a\tb\nc\x1b[2Jd", one_line=True) == "a b cd"
    assert printable(42) == "42"


@pytest.mark.parametrize(
    "value, cell",
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),  # OWASP's example
        ("+SUM(1+1)", "'+SUM(1+1)"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'=1"),  # CR removed, and the cell still escaped
        ("\x00=1", "'=1"),  # a control character hiding the formula
        ("covid-1", "covid-1"),
        ("a\x1b[2Jb", "ab"),
        (0.25, 0.25),  # numbers stay numbers (a negative one is not text)
        (-1.0, -1.0),
    ],
)
def test_csv_cell_defuses_formulas(value, cell):
    assert csv_cell(value) == cell


def test_printable_all_reaches_every_string():
    @dataclass(frozen=True)
    class Summary:
        reviewers: list
        n: int

    data = {"\x1b[1mk": [("a\x07", 1), {"x": "\x1b]0;t\x07v"}], "s": Summary(["e\x07ve"], 2)}
    assert printable_all(data) == {"k": [("a", 1), {"x": "v"}], "s": Summary(["eve"], 2)}


def test_json_for_terminal_escapes_c1_and_keeps_the_value():
    import json

    value = {"id": "a\x9b31m\x1b]0;t\x07\x7fé"}
    line = json_for_terminal(json.dumps(value, ensure_ascii=False))
    assert not any(0x7F <= ord(ch) <= 0x9F or ord(ch) < 0x20 for ch in line)
    assert "é" in line and json.loads(line) == value
