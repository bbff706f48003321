"""What the tests of the lab's network rules need (namespaces, nft), shared by them."""

from __future__ import annotations

import os
import shutil

import pytest


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    for program, package in (("ip", "iproute2"), ("nft", "nftables")):
        if shutil.which(program) is None:
            return f"{program} is not installed (apt-get install {package})"
    return None


WHY_NOT = _why_not()
# the module marks of such a test: functional, skipped (saying why) where it cannot run
MARKS = [pytest.mark.functional, pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")]
