"""Comparing a replayed case with its Ironic 39 recording, against a list of known
differences kept in a JSON file ("case/step" -> what differs). Shared by the replays of the
noauth recording and of the Keystone one."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ...compat.ironic_peer import record

# IRONSIGHT_PARITY_UPDATE=1: instead of failing, rewrite each replayed case's entries in the
# known-differences file to what differs now (then review the change with git diff).
UPDATE = os.environ.get("IRONSIGHT_PARITY_UPDATE") == "1"


def load_known(path: Path) -> dict[str, str]:
    return dict(json.loads(path.read_text())) if path.exists() else {}


def check_steps_recorded(recorded: Mapping[str, Any], cases: Mapping[str, Any],
                         known: Mapping[str, str]) -> None:
    for name, case in cases.items():
        assert name in recorded, f"{name} is not recorded: re-record (README)"
        assert [s["name"] for s in case["steps"]] == list(recorded[name]), \
            f"{name}: the recording's steps are not the case's: re-record it"
    for key in known:
        case_name, _, step_name = key.partition("/")
        assert step_name in recorded.get(case_name, {}), f"known differences: no step {key}"


def compare_case(case: Mapping[str, Any], recorded: Mapping[str, Any],
                 observed: Mapping[str, Any], known_file: Path) -> None:
    """Fail on a difference not in `known_file`, or on a listed one that is gone; xfail
    when only listed ones remain."""
    listed = load_known(known_file)
    unexpected, known, fixed = [], [], []
    now: dict[str, str] = {}
    for step in case["steps"]:
        if step.get("not_compared"):
            continue
        key = f"{case['name']}/{step['name']}"
        diffs = record.compare(recorded[step["name"]], observed[step["name"]],
                               step.get("volatile", ()))
        if diffs:
            now[key] = "; ".join(diffs)
        line = f"{key} ({step['method']} {step['path']} @{step['version']}): " + "; ".join(diffs)
        if key in listed:
            (known if diffs else fixed).append(line if diffs else key)
        elif diffs:
            unexpected.append(line)
    if UPDATE:
        _rewrite(known_file, case["name"], now)
        return
    assert not unexpected, "differs from Ironic 39:\n" + "\n".join(unexpected)
    assert not fixed, f"these match Ironic 39 now: remove them from {known_file.name}:\n" + \
        "\n".join(fixed)
    if known:
        pytest.xfail("known differences:\n" + "\n".join(known))


def _rewrite(path: Path, case_name: str, now: dict[str, str]) -> None:
    known = {k: v for k, v in load_known(path).items() if not k.startswith(f"{case_name}/")}
    path.write_text(json.dumps(known | now, indent=1, sort_keys=True) + "\n")
