"""The review queue and the corrected estimate in the TUI (docs/estimate.md): what the
``8`` prompt accepts, and the stopping rule's few words for the header."""

from __future__ import annotations

from typing import Any

from ..core.errors import RagreviewError


def parse(text: str) -> tuple[str, int, int]:
    """``STRATEGY N [SEED]`` (e.g. ``uncertainty 50 1``) -> (strategy, n, seed)."""
    # (the draws load with the `8` prompt, not with the first screen: issue 27)
    from ..services.queue_draws import STRATEGIES

    words = text.split()
    if not 2 <= len(words) <= 3 or words[0] not in STRATEGIES:
        raise RagreviewError(f"give STRATEGY N [SEED], a strategy one of {', '.join(STRATEGIES)}")
    try:
        n, seed = int(words[1]), int(words[2]) if len(words) == 3 else 0
    except ValueError:
        raise RagreviewError("N and SEED are whole numbers") from None
    return words[0], n, seed


def stopping(block: dict[str, Any]) -> str:
    """``±0.02: 140 more`` (or ``reached``) when a target half-width is set, else ''."""
    target, more = block.get("target_halfwidth"), block.get("more_reviews")
    if target is None or block.get("draw") is None:
        return ""
    if more is None:
        return f"±{target:g}: no estimate yet"
    return f"±{target:g}: {more} more" if more else f"±{target:g}: reached"
