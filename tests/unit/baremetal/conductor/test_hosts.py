"""The conductors the API shows: one per host, its replicas (`host:pid`) folded."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ironsight.baremetal.conductor.hosts import fold, host_of, page
from ironsight.common.exceptions import NotFound

T0 = dt.datetime(2025, 1, 1, 12, 0, 0)
ALIVE_SINCE = T0 - dt.timedelta(seconds=10)
_ids = iter(range(1, 1000))


def replica(name: str, *, alive: bool = True, drivers: tuple[str, ...] = ("fake-hardware",),
            group: str = "", started: int = 0) -> dict[str, Any]:
    return {"id": next(_ids), "name": name, "drivers": list(drivers), "conductor_group": group,
            "started_at": T0 - dt.timedelta(minutes=60 - started),
            "heartbeat_at": T0 if alive else T0 - dt.timedelta(minutes=5)}


def test_a_replicas_host_is_its_name_without_the_pid() -> None:
    assert host_of("vm:4242") == "vm"


def test_an_ipv6_host_keeps_its_colons() -> None:
    assert host_of("fd00::1:4242") == "fd00::1"


def test_a_name_without_a_pid_is_its_own_host() -> None:
    assert host_of("vm") == "vm"


def test_replicas_on_one_host_are_one_conductor() -> None:
    hosts = fold([replica("vm:1"), replica("vm:2"), replica("other:3")], ALIVE_SINCE)
    assert sorted(h.hostname for h in hosts) == ["other", "vm"]


def test_a_host_is_alive_while_any_replica_is() -> None:
    [host] = fold([replica("vm:1", alive=False), replica("vm:2")], ALIVE_SINCE)
    assert host.alive


def test_a_host_whose_replicas_all_stopped_heartbeating_is_dead() -> None:
    [host] = fold([replica("vm:1", alive=False), replica("vm:2", alive=False)], ALIVE_SINCE)
    assert not host.alive


def test_a_hosts_hardware_types_are_its_live_replicas() -> None:
    [host] = fold([replica("vm:1", drivers=("pxe_ipmitool",)),
                   replica("vm:2", drivers=("fake-hardware",)),
                   replica("vm:3", alive=False, drivers=("pxe_ssh",))], ALIVE_SINCE)
    assert host.drivers == ("fake-hardware", "pxe_ipmitool")


def test_a_hosts_times_span_its_replicas() -> None:
    [host] = fold([replica("vm:1", started=0, alive=False), replica("vm:2", started=30)],
                  ALIVE_SINCE)
    assert (host.created_at, host.updated_at) == (T0 - dt.timedelta(minutes=60), T0)


def test_a_hosts_group_is_its_live_replicas() -> None:
    [host] = fold([replica("vm:1", alive=False, group="old"), replica("vm:2", group="rack1")],
                  ALIVE_SINCE)
    assert host.conductor_group == "rack1"


def test_a_page_starts_after_the_marker() -> None:
    hosts = fold([replica(f"h{i}:1") for i in range(5)], ALIVE_SINCE)
    shown = page(hosts, sort_key="hostname", desc=False, marker="h1", limit=2)
    assert [h.hostname for h in shown] == ["h2", "h3"]


def test_a_page_sorts_descending() -> None:
    hosts = fold([replica(f"h{i}:1") for i in range(3)], ALIVE_SINCE)
    shown = page(hosts, sort_key="hostname", desc=True, marker=None, limit=10)
    assert [h.hostname for h in shown] == ["h2", "h1", "h0"]


def test_an_unknown_marker_is_not_found() -> None:
    with pytest.raises(NotFound, match=r"Conductor gone could not be found\."):
        page(fold([replica("vm:1")], ALIVE_SINCE), sort_key="id", desc=False, marker="gone",
             limit=10)
