"""Shared paths and helpers for the format tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from ragreview.cli import cli
from ragreview.core.labels import CATALOGUE

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
HANDWRITTEN = FIXTURES / "handwritten"
SHARED_RGB = REPO.parent / "shared" / "fixtures" / "rgb"


def map_args(source: Path) -> list[Any]:
    """A user-shaped file comes with its field map beside it (``X.map.toml``): it is
    imported (and re-imported after export) through that map."""
    mapping = source.with_name(source.stem + ".map.toml")
    return ["--map", mapping] if mapping.exists() else []


def run(*args: Any) -> Result:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return result


def load_values(path: Path) -> list[Any]:
    """A file's JSON values: the document of a whole-file JSON, else one per line."""
    text = path.read_text(encoding="utf-8-sig")
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def canonical(value: Any) -> str:
    """Comparable text of JSON values (NaN-safe, key order ignored)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def meaningful(layer: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A label layer without entries that only restate the catalogue default (an absent
    ``relevant`` is false), so layers from different routes compare equal."""
    out = {}
    for name, targets in layer.items():
        default = CATALOGUE[name].default
        kept = {t: v for t, v in targets.items() if not (default is not None and v == default)}
        if kept:
            out[name] = kept
    return out


# One or more real or hand-written files of every family (ragbench/TRACe, RGB, MT-RAG,
# ragas, SAFE and FActScore, InspectorRAGet, RAGChecker, DeepEval, our own format):
# what a test that must hold "for every family" imports. RGB's real data joins when
# ../shared is present.
FAMILY_SOURCES = [
    HANDWRITTEN / "ragbench" / "covidqa_test_rows.jsonl",
    HANDWRITTEN / "rgb" / "prediction_en_fact_ModelX_temp0.7_noise0.0_passage5_correct0.0.json",
    HANDWRITTEN / "rgb" / "prediction_zh_int_ModelX_temp0.7_noise0.2_passage5_correct0.0.json",
    HANDWRITTEN / "mtrag" / "generation_eval_output.jsonl",
    HANDWRITTEN / "ragas" / "ragas_v1_results.jsonl",
    HANDWRITTEN / "safe" / "2024-04-01-12-00-00-SAFE.json",
    HANDWRITTEN / "own" / "results.jsonl",
    FIXTURES / "factscore" / "factscore_labeled_ChatGPT.jsonl",
    FIXTURES / "inspectorraget" / "clapnq_v1.json",
    FIXTURES / "mtrag" / "responses-10.jsonl",
    FIXTURES / "ragas" / "annotated_data.json",
    FIXTURES / "ragchecker" / "checking_outputs.json",
    FIXTURES / "deepeval" / "runs" / "test_run_verdicts.json",
    FIXTURES / "deepeval" / "runs" / "test_run_edges.json",
] + ([SHARED_RGB / "en_fact.json"] if (SHARED_RGB / "en_fact.json").is_file() else [])
