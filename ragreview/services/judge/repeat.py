"""``judge --repeat N``: the same records judged again with the same prompt, to
measure the judge's own noise floor (docs/align.md, Judge vs itself).

A repeat is an ordinary run that asks the model again (the reply cache is bypassed:
a cached reply would repeat the first answer, not the judge) and names the run it
repeats in its parameters (``repeat_of``), which is how ``agreement --runs`` pairs
them. The first run stays the active judge layer: a repeat measures, it does not
replace.
"""

from __future__ import annotations

from dataclasses import replace

import sqlite_utils

from ...store import run_layers
from ..run_compare import REPEAT_OF
from .client import JudgeConfig


def repeat_config(config: JudgeConfig, first_run: str) -> JudgeConfig:
    """The configuration of a repeat of ``first_run``: the same prompt and model, no cache."""
    return replace(
        config, use_cache=False, extra_params={**config.extra_params, REPEAT_OF: first_run}
    )


def keep_first_active(db: sqlite_utils.Database, dataset: str, first_run: str) -> None:
    """After the repeats: the first run is the judge layer again (metrics follow)."""
    run_layers.use(db, dataset, first_run)
