"""The PXE side's checks at start, its sources of MACs, and how discoverd wires it in."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ironsight.common import config
from ironsight.common.db import Database, run_migrations
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.db.models import VERSION_TABLE
from ironsight.discoverd.ironic import Ironic
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe.filter import denies_unknown
from ironsight.discoverd.pxe.netif import parse_ip_addr
from ironsight.discoverd.pxe.service import PxeService, introspection_macs
from ironsight.discoverd.service import MIGRATIONS, DiscoverdService

needs_dnsmasq = pytest.mark.skipif(shutil.which("dnsmasq") is None,
                                   reason="dnsmasq is not installed")


def conf_for(tmp_path: Path, **pxe: str) -> config.Config:
    values = {"enabled": "true", "interface": "lo",
              "dhcp_range": "10.20.0.100,10.20.0.199,255.255.255.0,10m"}
    values.update(pxe)
    return config.load(overrides={"DEFAULT": {"state_dir": str(tmp_path)}, "pxe": values})


async def nothing() -> set[str]:
    return set()


def service(conf: config.Config) -> PxeService:
    return PxeService(conf, active_macs=nothing, known_macs=nothing, tftp_port=0)


@pytest.mark.parametrize(("options", "named"), [
    ({"interface": ""}, "[pxe] interface"),
    ({"dhcp_range": ""}, "[pxe] dhcp_range"),
    ({"dnsmasq_path": "/nonexistent/dnsmasq"}, "[pxe] dnsmasq_path"),
    ({"interface": "isd-missing0"}, "[pxe] interface"),
    ({"http_url": "10.20.0.1:5050"}, "[pxe] http_url"),
])
@needs_dnsmasq
async def test_start_refuses_a_config_that_cannot_work_naming_the_option(
        tmp_path: Path, options: dict[str, str], named: str) -> None:
    pxe = service(conf_for(tmp_path, **options))
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        await pxe.start()
    await pxe.stop()  # nothing was started: a no-op


@needs_dnsmasq
async def test_start_refuses_a_range_dnsmasq_does_not_accept(tmp_path: Path) -> None:
    pxe = service(conf_for(tmp_path, dhcp_range="not-a-range"))
    with pytest.raises(ConfigError, match="dnsmasq refuses"):
        await pxe.start()
    assert pxe.dnsmasq is None


async def test_http_url_defaults_to_the_interface_address_and_discoverd_port(
        tmp_path: Path) -> None:
    pxe = service(conf_for(tmp_path))
    await pxe._check()
    assert pxe.http_url == "http://127.0.0.1:5050"


async def test_http_url_given_is_used_without_its_trailing_slash(tmp_path: Path) -> None:
    pxe = service(conf_for(tmp_path, http_url="http://10.20.0.1:8080/"))
    await pxe._check()
    assert pxe.http_url == "http://10.20.0.1:8080"


def test_interface_addresses_are_read_from_ip_output() -> None:
    out = ("2: br0    inet 10.20.0.1/24 brd 10.20.0.255 scope global br0\\ valid_lft forever\n"
           "2: br0    inet6 fd20::1/64 scope global \\ valid_lft forever\n"
           "2: br0    inet6 fe80::1/64 scope link \\ valid_lft forever\n")
    found = parse_ip_addr(out)
    assert found.ipv4 == ["10.20.0.1"] and found.ipv6 == ["fd20::1"]


async def test_a_failed_filter_update_never_fails_the_introspection(tmp_path: Path) -> None:
    pxe = service(conf_for(tmp_path))

    async def broken() -> int:
        raise RuntimeError("iptables is gone")

    pxe.filter.on_change = broken  # type: ignore[method-assign]
    pxe._started = True
    await pxe.on_change()  # logged, and a full sync is brought forward
    assert pxe._wake.is_set()


async def test_events_before_start_are_ignored(tmp_path: Path) -> None:
    await service(conf_for(tmp_path)).on_change()


# --- sources --------------------------------------------------------------------------------


@pytest.fixture
async def cache(tmp_path: Path) -> AsyncIterator[NodeCache]:
    url = f"sqlite:///{tmp_path / 'discoverd.sqlite'}"
    run_migrations(url, MIGRATIONS, VERSION_TABLE)
    db = Database(url)
    yield NodeCache(db)
    await db.close()


async def test_introspection_macs_are_those_of_introspections_in_progress(cache: NodeCache
                                                                          ) -> None:
    await cache.start("u1", manage_boot=False, macs=["52:54:00:00:00:01"],
                      bmc_addresses=["10.0.0.5"])
    await cache.start("u2", manage_boot=False, macs=["52:54:00:00:00:02"], bmc_addresses=[])
    assert await introspection_macs(cache) == {"52:54:00:00:00:01", "52:54:00:00:00:02"}
    await cache.transition("u1", "error", error="x")
    assert await introspection_macs(cache) == {"52:54:00:00:00:02"}


async def test_port_macs_are_listed_page_by_page_following_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ironic = Ironic(conf_for(tmp_path))
    calls: list[tuple[str, dict[str, str] | None]] = []
    pages = [{"ports": [{"address": "52:54:00:00:00:0A"}, {"address": "52:54:00:00:00:0b"}],
              "next": "http://public.example/v1/ports?fields=address&limit=2&marker=p2"},
             {"ports": [{"address": "52:54:00:00:00:0c"}]}]

    async def call(method: str, path: str, body: Any = None,
                   params: dict[str, str] | None = None) -> Any:
        calls.append((path, params))
        return pages[len(calls) - 1]

    monkeypatch.setattr(ironic, "call", call)
    assert await ironic.list_all_port_macs() == {"52:54:00:00:00:0a", "52:54:00:00:00:0b",
                                                 "52:54:00:00:00:0c"}
    assert calls == [("/v1/ports", {"fields": "address", "limit": "1000"}),
                     ("/v1/ports", {"fields": "address", "limit": "2", "marker": "p2"})]


async def test_with_discovery_the_ports_of_nodes_in_rediscover_states_are_not_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A known machine in `enroll` may boot the ramdisk again (seen again)."""
    ironic = Ironic(conf_for(tmp_path))
    answers = {"/v1/nodes": {"nodes": [{"uuid": "n-enroll"}]},
               "/v1/ports": {"ports": [{"address": "52:54:00:00:00:01", "node_uuid": "n-enroll"},
                                       {"address": "52:54:00:00:00:02", "node_uuid": "n-ok"}]}}
    asked: list[dict[str, str] | None] = []

    async def call(method: str, path: str, body: Any = None,
                   params: dict[str, str] | None = None) -> Any:
        asked.append(params)
        return answers[path]

    monkeypatch.setattr(ironic, "call", call)
    assert await ironic.list_all_port_macs(["enroll"]) == {"52:54:00:00:00:02"}
    assert asked[0] == {"fields": "uuid", "provision_state": "enroll", "limit": "1000"}


def test_with_discovery_unknown_macs_are_admitted_whatever_deny_unknown_macs_says(
        tmp_path: Path) -> None:
    on = config.load(overrides={"pxe_filter": {"deny_unknown_macs": "true"},
                                "auto_discovery": {"enabled": "true"}})
    off = config.load(overrides={"pxe_filter": {"deny_unknown_macs": "true"}})
    assert (denies_unknown(on), denies_unknown(off)) == (False, True)


# --- wiring into discoverd ----------------------------------------------------------------


async def test_discoverd_gives_introspection_changes_to_the_pxe_side(tmp_path: Path) -> None:
    svc = DiscoverdService(conf_for(tmp_path))
    try:
        assert svc.pxe is not None
        assert svc.introspector.lifecycle.on_change == svc.pxe.on_change
    finally:
        await svc.db.close()


async def test_discoverd_without_pxe_has_no_pxe_side(tmp_path: Path) -> None:
    svc = DiscoverdService(conf_for(tmp_path, enabled="false"))
    try:
        assert svc.pxe is None and svc.introspector.lifecycle.on_change is None
    finally:
        await svc.db.close()


async def test_neighbour_mac_reads_the_kernels_neighbour_table() -> None:
    from ironsight.discoverd.pxe.netif import neighbour_mac

    # the loopback has no neighbours: nothing, whatever is asked
    assert await neighbour_mac("::1", "lo") is None
    assert await neighbour_mac("fd20::10a", "isd-missing0") is None


@pytest.mark.parametrize(("output", "mac"), [
    ("fd20:20::10a lladdr 52:54:00:1A:00:04 STALE\n", "52:54:00:1a:00:04"),
    ("fd20:20::10a lladdr 52:54:00:1a:00:04 router REACHABLE\n", "52:54:00:1a:00:04"),
    ("fd20:20::10a FAILED\n", None),
    ("fd20:20::10a INCOMPLETE\n", None),
    ("", None),
])
def test_parse_neigh_reads_the_mac_of_a_usable_entry(output: str, mac: str | None) -> None:
    from ironsight.discoverd.pxe.netif import parse_neigh

    assert parse_neigh(output) == mac
