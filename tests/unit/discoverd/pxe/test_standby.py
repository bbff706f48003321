"""Replicas of one provisioning network: the one that owns it serves it (filter, dnsmasq, TFTP);
the others stand by and take over when the ownership frees, and an owner that loses it stops
serving at once. dnsmasq is a stand-in script here (the ownership is what is tested; real
dnsmasq fails over in tests/functional/pxe/test_pxe_failover.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ironsight.common import config
from ironsight.discoverd.pxe.ownership import Ownership
from ironsight.discoverd.pxe.service import PxeService

FAKE_DNSMASQ = "#!/bin/sh\n[ \"$1\" = --test ] && exit 0\necho started >&2\nexec sleep 60\n"


class Switch(Ownership):
    """An ownership the test hands out and takes back."""

    def __init__(self, free: bool) -> None:
        self.free = free
        self.held = False

    async def try_acquire(self) -> bool:
        if self.free:
            self.held = True
        return self.held

    async def still_held(self) -> bool:
        return self.held and self.free

    async def release(self) -> None:
        self.held = False


async def nothing() -> set[str]:
    return set()


@pytest.fixture
def conf(tmp_path: Path) -> config.Config:
    script = tmp_path / "dnsmasq"
    script.write_text(FAKE_DNSMASQ)
    script.chmod(0o755)
    return config.load(overrides={
        "DEFAULT": {"state_dir": str(tmp_path)},
        "pxe": {"enabled": "true", "interface": "lo", "network": "prov-a",
                "dhcp_range": "10.20.0.100,10.20.0.199,255.255.255.0,10m",
                "http_url": "http://10.20.0.1:5050", "dnsmasq_path": str(script),
                "takeover_interval": "0.1"},
        "pxe_filter": {"driver": "noop", "sync_period": "0"}})


def replica(conf: config.Config, ownership: Switch, heard: list[str | None]) -> PxeService:
    async def on_ownership(network: str | None) -> None:
        heard.append(network)

    return PxeService(conf, active_macs=nothing, known_macs=nothing, ownership=ownership,
                      on_ownership=on_ownership, tftp_port=0)  # any port: not 69 of the host


async def eventually(condition, timeout: float = 5) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_the_owner_serves_the_network_and_says_so(conf: config.Config) -> None:
    heard: list[str | None] = []
    pxe = replica(conf, Switch(free=True), heard)
    await pxe.start()
    try:
        assert pxe.serving and heard == ["prov-a"]
        assert pxe.dnsmasq is not None
        await asyncio.wait_for(pxe.dnsmasq.running.wait(), 5)
    finally:
        await pxe.stop()
    assert heard == ["prov-a", None]


async def test_a_standby_runs_no_dnsmasq(conf: config.Config) -> None:
    heard: list[str | None] = []
    pxe = replica(conf, Switch(free=False), heard)
    await pxe.start()
    try:
        await asyncio.sleep(0.2)
        assert not pxe.serving and heard == []
        assert pxe.dnsmasq is not None and not pxe.dnsmasq.started
        assert pxe.tftp.bound == []
    finally:
        await pxe.stop()


async def test_a_standby_takes_over_when_the_ownership_frees(conf: config.Config) -> None:
    heard: list[str | None] = []
    ownership = Switch(free=False)
    pxe = replica(conf, ownership, heard)
    await pxe.start()
    try:
        ownership.free = True
        await eventually(lambda: pxe.serving)
        assert heard == ["prov-a"]
        assert pxe.dnsmasq is not None
        await asyncio.wait_for(pxe.dnsmasq.running.wait(), 5)
    finally:
        await pxe.stop()


async def test_an_owner_that_loses_the_ownership_stops_serving_at_once(
        conf: config.Config) -> None:
    heard: list[str | None] = []
    ownership = Switch(free=True)
    pxe = replica(conf, ownership, heard)
    await pxe.start()
    try:
        assert pxe.dnsmasq is not None
        await asyncio.wait_for(pxe.dnsmasq.running.wait(), 5)
        assert [address for address, _ in pxe.tftp.bound] == ["127.0.0.1"]
        ownership.free = False  # the lock's connection is gone: it may be another's now
        await eventually(lambda: heard == ["prov-a", None])  # its stand-down's last step
        assert not pxe.serving
        assert not pxe.dnsmasq.started
        assert pxe.tftp.bound == []  # the next owner binds the same addresses
    finally:
        await pxe.stop()


async def test_events_reach_the_filter_only_on_the_owner(conf: config.Config) -> None:
    pxe = replica(conf, Switch(free=False), [])
    await pxe.start()
    try:
        calls = []

        async def on_change() -> int:
            calls.append(1)
            return 0

        pxe.filter.on_change = on_change  # type: ignore[method-assign]
        await pxe.on_change()
        assert calls == []
    finally:
        await pxe.stop()
