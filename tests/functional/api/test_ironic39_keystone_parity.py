"""ironsight against recorded Ironic 39 behaviour with Keystone (issue 27, item 5): the
KEYSTONE_CASES of tests/compat/ironic_peer/cases.py were run against a real Ironic 39.0.0
with `auth_strategy = keystone` (tests/compat/ironic_peer/README.md), each request carrying
the token of a system-scoped or project-scoped user; what it answered is in
ironic39/recorded_keystone.json. Here the same users are made in a real Keystone
(keystone_setup.provision), ironsight runs in-process against it with Ironic's scope rules
(`allowed_projects` empty: only system-scoped tokens act on the whole fleet), and each case
is replayed and compared as test_ironic39_parity.py does. Known differences:
ironic39/known_differences_keystone.json (IRONSIGHT_PARITY_UPDATE=1 rewrites it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ironsight.baremetal.service import BaremetalService

from ...compat.ironic_peer import cases, keystone_setup, record
from ..keystone import ADMIN_PASSWORD, keystone_sections
from .parity import check_steps_recorded, compare_case, load_known

HERE = Path(__file__).parent / "ironic39"
RECORDING = json.loads((HERE / "recorded_keystone.json").read_text())
KNOWN_FILE = HERE / "known_differences_keystone.json"
CASES = {c["name"]: c for c in cases.KEYSTONE_CASES}


@pytest.fixture(scope="module")
def users(keystone: Any) -> tuple[dict[str, str], dict[str, str]]:
    """({user: token}, {project_a...: project ID}) in the session's Keystone."""
    return keystone_setup.provision(keystone.url, ADMIN_PASSWORD)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'bm.sqlite'}"  # policy, not storage: SQLite is enough


@pytest.fixture
def conf_overrides(keystone: Any) -> dict[str, dict[str, str]]:
    sections = keystone_sections(keystone)
    sections["keystone_authtoken"]["allowed_projects"] = ""  # Ironic's scope rules
    return {**sections, "conductor": {"enabled_hardware_types": "fake-hardware,pxe_ipmitool"}}


def test_the_keystone_recording_covers_every_case_and_step() -> None:
    check_steps_recorded(RECORDING["cases"], CASES, load_known(KNOWN_FILE))


@pytest.mark.parametrize("case_name", list(CASES))
async def test_ironsight_scopes_tokens_as_ironic_39(
        service: BaremetalService, users: tuple[dict[str, str], dict[str, str]],
        case_name: str) -> None:
    tokens, variables = users
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bm.test") as client:
        observed = await record.run_case(client, CASES[case_name], tokens, variables)
    compare_case(CASES[case_name], RECORDING["cases"][case_name], observed, KNOWN_FILE)
