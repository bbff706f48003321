"""The processing hooks this source tree declares in its pyproject.toml, as entry points.

The tests run against the source tree (`PYTHONPATH=src`), while `importlib.metadata` reads
the entry points of the *installed* copy, which lags behind a tree that adds a hook until
`pip install -e .` runs again. Tests that must see every hook of the tree (the checks that
each is documented and tested, and the functional tests that configure new hooks) read them
from here; with an up-to-date install both agree.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from ironsight.common import plugins

ROOT = Path(__file__).resolve().parents[3]


def declared(group: str = plugins.PROCESSING_HOOKS) -> list[EntryPoint]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [EntryPoint(name, value, group)
            for name, value in project["entry-points"].get(group, {}).items()]


def with_declared(lookup: Callable[..., Iterable[EntryPoint]] = entry_points
                  ) -> Callable[..., Iterable[EntryPoint]]:
    """An `entry_points(group=...)` that answers the installed entry points, with the tree's
    own processing hooks in place of the installed copy's (to monkeypatch into
    ironsight.discoverd.plugins.base)."""
    ours = declared()
    names = {ep.name for ep in ours}

    def lookup_with_declared(group: str) -> Iterable[EntryPoint]:
        installed = list(lookup(group=group))
        if group != plugins.PROCESSING_HOOKS:
            return installed
        return [*ours, *(ep for ep in installed if ep.name not in names)]
    return lookup_with_declared
