"""What the CLI tests share: a clock that only moves when the command sleeps, and the
`node|port|driver` commands wired to a fake bare-metal API.

The CLI talks to an `httpx.MockTransport` backed by `FakeService`, which records every
request and answers from per-route queues; `--wait` polls the fake clock so no test sleeps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import click
import httpx
import pytest
from click.testing import CliRunner, Result

from ironsight.cli import driver, node, port
from ironsight.cli.options import Runtime
from ironsight.client.http import DEFAULT_BAREMETAL_URL

from ..fakes import FakeClock, FakeService, fake_baremetal

NODE_UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
NODE2_UUID = "5f8d1c2e-8a1b-4b34-9a1d-2f3c4d5e6f70"
PORT_UUID = "9e3c1f0a-7b6d-4c5e-8f9a-0b1c2d3e4f50"
BASE = DEFAULT_BAREMETAL_URL


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def node_obj(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "uuid": NODE_UUID, "name": "demo-0", "driver": "fake", "power_state": "power off",
        "target_power_state": None, "provision_state": "enroll",
        "target_provision_state": None, "maintenance": False, "last_error": None,
        "driver_info": {"ipmi_password": "******"}, "properties": {}, "extra": {},
        "links": [{"href": f"{BASE}/v1/nodes/{NODE_UUID}", "rel": "self"}],
    }
    return {**base, **fields}


def states(*pairs: tuple[str, str | None], **fields: Any) -> Iterator[httpx.Response]:
    """Node bodies for a sequence of (provision_state, target_provision_state)."""
    for state, target in pairs:
        yield httpx.Response(200, json=node_obj(provision_state=state,
                                                target_provision_state=target, **fields))


@pytest.fixture
def api() -> FakeService:
    return fake_baremetal()


@pytest.fixture
def cli() -> click.Group:
    group = click.Group("ironsight")
    for module in (node, port, driver):
        module.register(group)
    return group


@pytest.fixture
def run(cli: click.Group, api: FakeService, clock: FakeClock,
        monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    monkeypatch.delenv("IRONSIGHT_URL", raising=False)

    def invoke(*args: str, transport: httpx.BaseTransport | None = None,
               env: dict[str, str] | None = None) -> Result:
        runtime = Runtime(
            transport=transport or api.transport,
            sleep=clock.sleep, clock=clock, poll_interval=2.0,
        )
        return CliRunner().invoke(cli, list(args), obj=runtime, env=env)

    return invoke
