"""``export --as disagreements``: the overridden items as few-shot examples, written
through the export guards (docs/estimate.md)."""

from __future__ import annotations

import json
import shutil

from .agreement_helpers import quick, run


def test_disagreements_pack_holds_context_and_both_reasons(tmp_path, fixtures_dir) -> None:
    path = tmp_path / "rb.jsonl"
    shutil.copy(fixtures_dir / "handwritten" / "ragbench" / "covidqa_test_rows.jsonl", path)
    quick("import", str(path))
    quick("label", str(path), "covidqa-17", "supported", "a", "false", "--reviewer", "ann",
          "--reason", "IL-6 is not said to drive it")  # fmt: skip
    quick("label", str(path), "covidqa-17", "relevant", "0c", "true", "--reviewer", "ann")
    # set to what the judge already said: not a disagreement
    quick("label", str(path), "covidqa-17", "supported", "b", "true", "--reviewer", "ann")
    out = tmp_path / "pack.jsonl"
    proc = run("export", str(path), "--as", "disagreements", "--out", str(out))
    assert "wrote 2 items" in proc.stderr
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(i["record"], i["label"], i["target"]) for i in items] == [
        ("covidqa-17", "relevant", "0c"),
        ("covidqa-17", "supported", "a"),
    ]
    relevant, supported = items
    assert relevant["item"] == "The study enrolled 120 patients in Wuhan."
    assert [d["sentences"][0][0] for d in relevant["context"]["documents"]] == ["0a"]  # its doc
    # absent from the judge's layer: the catalogue default (not relevant)
    assert relevant["judge"]["value"] is False and relevant["human"]["value"] is True
    assert supported["context"]["question"] == (
        "What causes prolonged inflammation in severe COVID-19?"
    )
    assert supported["item"].startswith("Prolonged inflammation is driven by a cytokine storm")
    assert len(supported["context"]["documents"]) == 2
    assert supported["judge"] == {
        "value": True,
        "reason": "The sentence is backed by the documents.",
    }
    assert supported["human"]["value"] is False
    assert supported["human"]["reason"] == "IL-6 is not said to drive it"
    assert supported["human"]["reviewer"] == "ann"
    # the export guards: an existing file needs --force, the input is never replaced
    again = run("export", str(path), "--as", "disagreements", "--out", str(out), check=False)
    assert again.returncode == 1 and "--force" in again.stderr
    over = run("export", str(path), "--as", "disagreements", "--out", str(path), "--force",
               check=False)  # fmt: skip
    assert over.returncode == 1 and "refusing to write over" in over.stderr
    assert not list(tmp_path.glob(".pack.jsonl.*.tmp"))
    reviewed = run("export", str(path), "--as", "disagreements", "--out", "-", "--reviewed-only")
    assert reviewed.stdout == ""  # nothing marked reviewed yet
