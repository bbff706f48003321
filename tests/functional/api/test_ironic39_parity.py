"""ironsight against recorded Ironic 39 behaviour (issue 27): the request sequences of
tests/compat/ironic_peer/cases.py were run against a real Ironic 39.0.0 (fake-hardware,
noauth; how: tests/compat/ironic_peer/README.md) and what it answered is in
ironic39/recorded.json. Each case is replayed here against ironsight in-process and compared
step by step: status, Content-Type and Allow, the version headers Ironic sent, the body's
shape (keys and value types), Ironic's error text and its envelope's form, and the exact
values a step names. Like the other API tests, each case runs on SQLite and on PostgreSQL (the
latter when IRONSIGHT_TEST_PG_URL is set; ~20 s for both).

A step where ironsight is known to answer otherwise is listed, with what differs, in
ironic39/known_differences.json (the comparison: parity.py); a case whose only differences
are listed ones is an expected failure, and a listed step that now matches fails the test
(remove it from the list), as xfail(strict=True) would. IRONSIGHT_PARITY_UPDATE=1 rewrites
the list to what differs now.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from ironsight.baremetal.discoverd_proxy import DiscoverdProxy
from ironsight.baremetal.service import BaremetalService
from ironsight.discoverd.service import DiscoverdService
from ironsight.discoverd.service import upgrade_database as upgrade_discoverd

from ...compat.ironic_peer import cases, record
from .parity import check_steps_recorded, compare_case, load_known

RECORDING = json.loads((Path(__file__).parent / "ironic39" / "recorded.json").read_text())
CASES = {c["name"]: c for c in cases.CASES}

# "case/step" -> what differs (Ironic 39's answer vs ironsight's); why each remaining one is
# deliberate: docs/api.md, "Where ironsight differs from Ironic".
KNOWN_FILE = Path(__file__).parent / "ironic39" / "known_differences.json"


# cases whose requests ironsight forwards to discoverd (it keeps the inspection rules)
NEEDS_DISCOVERD = {"gate-inspection_rules"}


@pytest.fixture
def conf_overrides(tmp_path: Path) -> dict[str, dict[str, str]]:
    return {
        # two hardware types, as the peer has (fake-hardware and ipmi)
        "conductor": {"enabled_hardware_types": "fake-hardware,pxe_ipmitool"},
        # discoverd in-process for NEEDS_DISCOVERD, reached through an ASGI transport
        "discoverd": {"service_url": "http://di.test/v1"},
        "introspection": {"connection": f"sqlite:///{tmp_path / 'di.sqlite'}"},
    }


@asynccontextmanager
async def discoverd_for(service: BaremetalService) -> AsyncIterator[None]:
    upgrade_discoverd(service.conf)
    discoverd = DiscoverdService(service.conf)
    await discoverd.start()
    proxy = DiscoverdProxy(service.conf, transport=httpx.ASGITransport(app=discoverd.app))
    service.api_app.state.deps = dataclasses.replace(service.api_app.state.deps, discoverd=proxy)
    try:
        yield
    finally:
        await proxy.close()
        await discoverd.stop()


def test_the_recording_covers_every_case_and_step() -> None:
    check_steps_recorded(RECORDING["cases"], CASES, load_known(KNOWN_FILE))


@pytest.mark.parametrize("case_name", list(CASES))
async def test_ironsight_answers_as_ironic_39(service: BaremetalService, case_name: str) -> None:
    case = CASES[case_name]
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bm.test") as client:
        if case_name in NEEDS_DISCOVERD:
            async with discoverd_for(service):
                observed = await record.run_case(client, case)
        else:
            observed = await record.run_case(client, case)
    compare_case(case, RECORDING["cases"][case_name], observed, KNOWN_FILE)
