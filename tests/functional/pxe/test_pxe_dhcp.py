"""Real dnsmasq, supervised by discoverd's PXE side, answering (or not) a DHCP client in
another network namespace, as the PXE filter decides.

A refusal is proven twice: the client gets no lease within a bounded time, and dnsmasq's own
log (forwarded by the supervisor) shows why — it ignored the MAC (dnsmasq driver), or never saw
it (iptables driver). So the client's wait can be short: a first lease takes ~3.4 s (dnsmasq
pings a new address before offering it), a renewal ~0.1 s.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time

import pytest

from .conftest import PxeNet

UNKNOWN = "52:54:00:5e:00:01"  # no port in the bare-metal service
DEPLOYED = "52:54:00:5e:00:02"  # a port, not under introspection
INSPECTED = "52:54:00:5e:00:03"  # a port, under introspection from the start


@pytest.fixture
def dnsmasq_log(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG, logger="ironsight.discoverd.pxe.dnsmasq")

    def lines(mac: str, word: str = "") -> list[str]:
        return [r.getMessage() for r in caplog.records
                if r.name == "ironsight.discoverd.pxe.dnsmasq" and mac in r.getMessage()
                and word in r.getMessage()]

    caplog.clear()
    return lines


async def assert_refused(net: PxeNet, mac: str, tries: int = 2) -> None:
    began = time.monotonic()
    assert await net.dhcp(mac, tries=tries) is None
    assert time.monotonic() - began < 8


async def test_dnsmasq_filter_denies_deployed_macs_and_follows_introspections_live(
        pxe_net: PxeNet, make_pxe, introspections, dnsmasq_log) -> None:
    async with make_pxe(known={DEPLOYED, INSPECTED}) as pxe:
        intro = introspections(pxe)
        await intro.start(INSPECTED)
        pid = pxe.dnsmasq.pid

        assert (await pxe_net.dhcp(INSPECTED) or "").startswith(pxe_net.subnet)
        await assert_refused(pxe_net, DEPLOYED)
        assert dnsmasq_log(DEPLOYED, "ignored")

        uuid = await intro.start(DEPLOYED)  # rewrites its hosts file: no dnsmasq restart
        assert (await pxe_net.dhcp(DEPLOYED) or "").startswith(pxe_net.subnet)
        await intro.end(uuid)
        ignored = len(dnsmasq_log(DEPLOYED, "ignored"))
        await assert_refused(pxe_net, DEPLOYED)  # its lease exists: a renewal would be fast
        assert len(dnsmasq_log(DEPLOYED, "ignored")) > ignored
        assert pxe.dnsmasq.pid == pid and pxe.dnsmasq.restarts == 0


async def test_dnsmasq_filter_with_deny_unknown_macs_lets_in_only_introspected_macs(
        pxe_net: PxeNet, make_pxe, introspections, dnsmasq_log) -> None:
    async with make_pxe(known={DEPLOYED}, deny_unknown=True) as pxe:
        await introspections(pxe).start(INSPECTED)
        assert (await pxe_net.dhcp(INSPECTED) or "").startswith(pxe_net.subnet)
        await assert_refused(pxe_net, UNKNOWN)
        assert dnsmasq_log(UNKNOWN, "ignored")


async def test_iptables_filter_drops_deployed_macs_until_introspection_and_cleans_up(
        pxe_net: PxeNet, make_pxe, introspections, dnsmasq_log) -> None:
    async with make_pxe(known={DEPLOYED}, driver="iptables") as pxe:
        rules = pxe_net.iptables_rules().lower()
        assert f"-a ironsight-pxe -m mac --mac-source {DEPLOYED} -j drop" in rules
        assert "-a input -i pxe0 -p udp -m udp --dport 67 -j ironsight-pxe" in rules
        assert (await pxe_net.dhcp(UNKNOWN) or "").startswith(pxe_net.subnet)
        await assert_refused(pxe_net, DEPLOYED)
        assert not dnsmasq_log(DEPLOYED, "DHCP")  # dropped before dnsmasq (an IPv6 RS may pass)

        await introspections(pxe).start(DEPLOYED)
        assert DEPLOYED not in pxe_net.iptables_rules().lower()
        assert (await pxe_net.dhcp(DEPLOYED) or "").startswith(pxe_net.subnet)
    assert "ironsight-pxe" not in pxe_net.iptables_rules()


async def test_dnsmasq_is_restarted_after_it_is_killed(pxe_net: PxeNet, make_pxe) -> None:
    async with make_pxe(known=set()) as pxe:
        old = pxe.dnsmasq.pid
        os.kill(old, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while pxe.dnsmasq.restarts < 1 or not pxe.dnsmasq.running.is_set():
            assert time.monotonic() < deadline, "dnsmasq was not restarted within 10 s"
            await asyncio.sleep(0.05)
        assert pxe.dnsmasq.pid not in (None, old)
        assert (await pxe_net.dhcp(UNKNOWN) or "").startswith(pxe_net.subnet)
