"""docs/estimate.md's worked example, computed by core.estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragreview.core import estimate as E

DOC = Path(__file__).resolve().parents[2] / "docs" / "estimate.md"


def test_worked_example_numbers() -> None:
    judge = [1, 1, 0, 1, 1, 0, 1, 1]
    used = [(1.0, 1.0, 0.5), (0.0, 1.0, 0.8), (1.0, 0.0, 0.4), (0.0, 0.0, 0.5)]
    est = E.estimate(len(judge), float(sum(judge)), used)
    assert est.lam == pytest.approx(2 / 5.75)
    assert est.variance == pytest.approx(0.025263, abs=5e-7)
    assert est.ci is not None
    text = DOC.read_text(encoding="utf-8")
    for shown in (
        f"{est.lam:.4f}",
        f"**{est.estimate:.4f}**",
        f"{est.variance:.5f}",
        f"{E.halfwidth(est):.4f}",
        f"**[{est.ci[0]:.4f}, {est.ci[1]:.4f}]**",
        f"**{E.more_reviews(est, 0.1)} more**",
    ):
        assert shown in text, shown
