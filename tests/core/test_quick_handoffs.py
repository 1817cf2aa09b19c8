"""``quick_handoffs``: the switch interval inside the block, the caller's after it."""

import sys

import pytest

from ragreview.core.quick_handoffs import HANDOFF_SECONDS, quick_handoffs


def test_the_interval_is_short_inside_and_restored_after_however_the_block_ends() -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.004)
        with quick_handoffs():
            assert sys.getswitchinterval() == pytest.approx(HANDOFF_SECONDS)
        assert sys.getswitchinterval() == pytest.approx(0.004)
        with pytest.raises(RuntimeError), quick_handoffs(0.001):
            assert sys.getswitchinterval() == pytest.approx(0.001)
            raise RuntimeError("the block fails")
        assert sys.getswitchinterval() == pytest.approx(0.004)
    finally:
        sys.setswitchinterval(before)
