"""Pilot tests of the follow-ups: source-format export, the newer label keys."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from ragreview.cli import cli

from .conftest import REPO, make_app, opened

RGB = REPO / "fixtures" / "handwritten" / "rgb"
RGB_REJECT = RGB / "prediction_en_ModelX_temp0.7_noise1.0_passage5_correct0.0.json"


async def test_export_writes_the_source_format_beside_the_db_like_the_cli(tmp_path):
    source = tmp_path / "rgbset.json"
    shutil.copy(RGB_REJECT, source)
    o = opened(source)
    app = make_app(o)
    notes: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rec = app.screen.review.stored
        judge_rejected = bool(rec.judge.get("rejected", {}).get("*"))
        await pilot.press("x", "ctrl+e")  # flip the rejection verdict, export
        await app.workers.wait_for_complete()
        await pilot.pause()
        notes = [n.message for n in app._notifications]
    out = tmp_path / "rgbset.reviewed.json"  # the source's extension, not .jsonl
    assert out.exists() and not (tmp_path / "rgbset.reviewed.jsonl").exists()
    assert any(str(out) in n and "as rgb" in n for n in notes), notes
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    original = [json.loads(line) for line in source.read_text().splitlines()]
    assert len(rows) == len(original)
    assert "labels" not in rows[0]  # RGB rows, not ragreview JSONL
    assert rows[0] != original[0] and rows[1:] == original[1:]
    assert (rows[0].get("label") == [-1]) is not judge_rejected
    # byte-for-byte what `ragreview export --as source` writes
    cli_out = tmp_path / "cli.json"
    result = CliRunner().invoke(cli, ["export", str(o.target.db_path), "--out", str(cli_out)])
    assert result.exit_code == 0, result.output
    assert cli_out.read_bytes() == out.read_bytes()
