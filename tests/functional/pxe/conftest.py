"""A private provisioning network for real dnsmasq: two network namespaces made for the test
(`isd-<random>`: discoverd's side, `isd-<random>c`: the booting node) joined by a veth pair,
10.x addresses inside them only. The "node" is busybox `udhcpc` on its end of the veth, with
the MAC the test chooses. Everything started inside is killed and both namespaces deleted at
the end, whatever happened."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
import subprocess
import uuid as uuidlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ironsight.common import config
from ironsight.common.db import Database, run_migrations
from ironsight.discoverd.db.models import VERSION_TABLE
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe.service import PxeService, introspection_macs
from ironsight.discoverd.service import MIGRATIONS

SERVER_IF = "pxe0"
CLIENT_IF = "node0"


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@dataclass
class PxeNet:
    server: str  # namespace names
    client: str
    subnet: str  # "10.a.b"

    @property
    def prefix(self) -> list[str]:
        """How discoverd's side runs dnsmasq, iptables and ip: inside the server namespace."""
        return ["ip", "netns", "exec", self.server]

    async def dhcp(self, mac: str, tries: int = 4) -> str | None:
        """The address a node with this MAC is given, or None after `tries` discovers one
        second apart."""
        for args in (("link", "set", "dev", CLIENT_IF, "down"),
                     ("link", "set", "dev", CLIENT_IF, "address", mac),
                     ("link", "set", "dev", CLIENT_IF, "up")):
            _ip("-n", self.client, *args)
        # -B: broadcast replies (the unicast OFFER to an unconfigured veth is not received).
        proc = await asyncio.create_subprocess_exec(
            "ip", "netns", "exec", self.client, "busybox", "udhcpc", "-i", CLIENT_IF, "-f",
            "-q", "-n", "-B", "-t", str(tries), "-T", "1", "-s", "/bin/true",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), tries + 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        found = re.search(rb"lease of (\S+) obtained", out)
        return found.group(1).decode() if found else None

    def iptables_rules(self) -> str:
        return subprocess.run([*self.prefix, "iptables", "-S"], capture_output=True,
                              text=True, timeout=10).stdout


def _kill_inside(namespace: str) -> None:
    pids = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True,
                          timeout=10).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), 9)


@pytest.fixture
def pxe_net() -> Iterator[PxeNet]:
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    for program in ("dnsmasq", "busybox", "ip", "iptables"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed (apt-get install dnsmasq-base "
                        "busybox-static iptables)")
    name = f"isd-{secrets.token_hex(4)}"
    net = PxeNet(server=name, client=f"{name}c",
                 subnet=f"10.{secrets.randbelow(200) + 20}.{secrets.randbelow(250)}")
    created = []
    try:
        for namespace in (net.server, net.client):
            _ip("netns", "add", namespace)
            created.append(namespace)
        _ip("link", "add", SERVER_IF, "netns", net.server, "type", "veth",
            "peer", "name", CLIENT_IF, "netns", net.client)
        _ip("-n", net.server, "addr", "add", f"{net.subnet}.1/24", "dev", SERVER_IF)
        _ip("-n", net.server, "addr", "add", "fd5e:1::1/64", "dev", SERVER_IF, "nodad")
        # the probe's DHCPv6 client needs its link-local address at once
        subprocess.run(["ip", "netns", "exec", net.client, "sysctl", "-qw",
                        f"net.ipv6.conf.{CLIENT_IF}.accept_dad=0"], check=True,
                       capture_output=True, timeout=10)
        for namespace, iface in ((net.server, SERVER_IF), (net.client, CLIENT_IF)):
            _ip("-n", namespace, "link", "set", "lo", "up")
            _ip("-n", namespace, "link", "set", iface, "up")
        yield net
    finally:
        for namespace in created:
            _kill_inside(namespace)
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=10)


@pytest.fixture
async def node_cache(tmp_path: Path) -> AsyncIterator[NodeCache]:
    url = f"sqlite:///{tmp_path / 'discoverd.sqlite'}"
    run_migrations(url, MIGRATIONS, VERSION_TABLE)
    db = Database(url)
    yield NodeCache(db)
    await db.close()


class Introspections:
    """Starts and ends introspections in the real node cache, and tells the PXE side, as the
    Introspector does."""

    def __init__(self, cache: NodeCache, pxe: PxeService) -> None:
        self.cache = cache
        self.pxe = pxe

    async def start(self, *macs: str) -> str:
        uuid = str(uuidlib.uuid4())
        await self.cache.start(uuid, manage_boot=False, macs=macs, bmc_addresses=[])
        await self.pxe.on_change()
        return uuid

    async def end(self, uuid: str) -> None:
        await self.cache.transition(uuid, "error", error="ended by the test")
        await self.pxe.on_change()


PxeFactory = Callable[..., "contextlib.AbstractAsyncContextManager[PxeService]"]


@pytest.fixture
def make_pxe(pxe_net: PxeNet, node_cache: NodeCache, tmp_path: Path) -> PxeFactory:
    """`async with make_pxe(known={...}, driver=..., deny_unknown=...) as pxe:` a started
    PxeService in the test network, whose dnsmasq already runs; the bare-metal service's
    ports are `known`."""

    @contextlib.asynccontextmanager
    async def factory(known: set[str], driver: str = "dnsmasq", deny_unknown: bool = False,
                      tokens: bool = False, **pxe_options: str) -> AsyncIterator[PxeService]:
        conf = config.load(overrides={
            "DEFAULT": {"state_dir": str(tmp_path / "state")},
            "pxe": {"enabled": "true", "interface": SERVER_IF,
                    "dhcp_range": f"{pxe_net.subnet}.100,{pxe_net.subnet}.199,255.255.255.0,10m",
                    "http_url": f"http://{pxe_net.subnet}.1:5050", **pxe_options},
            "pxe_filter": {"driver": driver, "deny_unknown_macs": str(deny_unknown).lower()}})

        async def known_macs() -> set[str]:
            return set(known)

        # dnsmasq, ip and iptables run in the server namespace, the TFTP server's sockets
        # are made there; with `tokens`, boot configs carry callback tokens (the node cache)
        pxe = PxeService(conf, active_macs=lambda: introspection_macs(node_cache),
                         known_macs=known_macs, namespace=pxe_net.server,
                         cache=node_cache if tokens else None)
        await pxe.start()
        try:
            assert pxe.dnsmasq is not None
            await asyncio.wait_for(pxe.dnsmasq.running.wait(), 10)
            yield pxe
        finally:
            await pxe.stop()

    return factory


@pytest.fixture
def introspections(node_cache: NodeCache) -> Callable[[PxeService], Introspections]:
    return lambda pxe: Introspections(node_cache, pxe)
