"""`ironsight serve`'s process set-up."""

from __future__ import annotations

import gc

from ironsight.cli.server import _settle_heap


def test_what_start_up_made_is_out_of_the_collectors_reach() -> None:
    """Full collections then walk only what the services made since (bench/RESULTS.md)."""
    gc.unfreeze()
    leftover = [object() for _ in range(1000)]
    try:
        _settle_heap()
        assert gc.get_freeze_count() >= len(leftover)
    finally:
        gc.unfreeze()
