"""The PXE filter's decisions, its event and reconcile paths, and what each driver does for
one change (one file written, one iptables rule)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from ironsight.discoverd.pxe.filter import (
    FilterDriver,
    NoopDriver,
    PxeFilter,
    ethernet_macs,
    is_allowed,
)
from ironsight.discoverd.pxe.hostsdir import HostsDirDriver
from ironsight.discoverd.pxe.iptables import IptablesDriver

A, B, C, D = (f"52:54:00:00:00:0{i}" for i in range(1, 5))


class Sources:
    """The node cache's introspection MACs and the bare-metal service's port MACs."""

    def __init__(self, known: set[str], active: set[str] | None = None) -> None:
        self.known = known
        self.active = active or set()
        self.port_listings = 0
        self.cache_reads = 0

    async def active_macs(self) -> set[str]:
        self.cache_reads += 1
        await asyncio.sleep(0.001)
        return set(self.active)

    async def known_macs(self) -> set[str]:
        self.port_listings += 1
        return set(self.known)


class Recorder(FilterDriver):
    name = "recorder"

    def __init__(self, deny_unknown: bool = False) -> None:
        super().__init__(deny_unknown)
        self.applied: list[dict[str, bool]] = []

    async def start(self) -> None:
        self.entries = {}

    async def stop(self) -> None:
        pass

    async def apply(self, changes: Mapping[str, bool]) -> None:
        self.applied.append(dict(changes))
        self.entries.update(changes)


def make(driver: FilterDriver, sources: Sources) -> PxeFilter:
    return PxeFilter(driver, active_macs=sources.active_macs, known_macs=sources.known_macs)


def verdicts(driver: FilterDriver, macs: Sequence[str]) -> dict[str, bool]:
    return {m: driver.entries.get(m, not driver.deny_unknown) for m in macs}


# --- decisions --------------------------------------------------------------------------


@pytest.mark.parametrize(("deny_unknown", "expected"), [
    (False, {A: True, B: False, C: True}),
    (True, {A: True, B: False, C: False}),
])
def test_allowed_is_introspection_plus_unknown_unless_denied_and_denied_is_known_minus_it(
        deny_unknown: bool, expected: dict[str, bool]) -> None:
    active, known = {A}, {A, B}  # A: a port under introspection; B: a port; C: unknown
    assert {m: is_allowed(m, active=active, known=known, deny_unknown=deny_unknown)
            for m in (A, B, C)} == expected


def test_only_ethernet_macs_reach_a_driver() -> None:
    guid = "20:00:55:04:01:fe:80:00:00:00:00:00:00:00:02:c9:02:00:23:13:92"
    assert ethernet_macs([" 52:54:00:AA:00:01", guid, "../../etc", ""]) == {
        "52:54:00:aa:00:01"}


@pytest.mark.parametrize("deny_unknown", [False, True])
async def test_reconcile_gives_every_mac_its_verdict(deny_unknown: bool) -> None:
    driver = Recorder(deny_unknown)
    pxe_filter = make(driver, Sources(known={A, B, C}, active={A}))
    await pxe_filter.start()
    await pxe_filter.reconcile()
    assert verdicts(driver, [A, B, C, D]) == {A: True, B: False, C: False,
                                              D: not deny_unknown}
    # Only what differs from the default is ever applied.
    assert set(driver.applied[0]) == ({B, C} if not deny_unknown else {A})


async def test_a_second_reconcile_changes_nothing_when_nothing_changed() -> None:
    driver = Recorder()
    pxe_filter = make(driver, Sources(known={A, B}))
    await pxe_filter.reconcile()
    assert (await pxe_filter.reconcile()).changed == 0
    assert len(driver.applied) == 1


async def test_reconcile_allows_again_a_mac_whose_port_was_deleted() -> None:
    sources = Sources(known={A, B})
    driver = Recorder()
    pxe_filter = make(driver, sources)
    await pxe_filter.reconcile()
    sources.known = {A}
    await pxe_filter.reconcile()
    assert verdicts(driver, [A, B]) == {A: False, B: True}


# --- events -----------------------------------------------------------------------------


async def test_introspection_start_allows_and_end_denies_the_node_macs() -> None:
    sources = Sources(known={A, B, C})
    driver = Recorder()
    pxe_filter = make(driver, sources)
    await pxe_filter.reconcile()

    sources.active = {A, B}
    assert await pxe_filter.on_change() == 2
    assert driver.applied[-1] == {A: True, B: True}
    sources.active = {B}
    assert await pxe_filter.on_change() == 1
    assert driver.applied[-1] == {A: False}
    assert verdicts(driver, [A, B, C]) == {A: False, B: True, C: False}


async def test_an_introspected_mac_is_denied_at_its_end_even_before_a_reconcile_saw_its_port(
        ) -> None:
    sources = Sources(known=set())
    driver = Recorder()
    pxe_filter = make(driver, sources)
    await pxe_filter.reconcile()  # the port of A is created after this listing
    sources.active = {A}
    await pxe_filter.on_change()
    sources.active = set()
    await pxe_filter.on_change()
    assert verdicts(driver, [A]) == {A: False}


async def test_an_event_never_lists_ports_and_changes_only_the_macs_that_moved() -> None:
    ports = {f"52:54:00:10:{i // 256:02x}:{i % 256:02x}" for i in range(5000)}
    sources = Sources(known=ports | {A})
    driver = Recorder()
    pxe_filter = make(driver, sources)
    await pxe_filter.reconcile()
    listings = sources.port_listings

    sources.active = {A}
    await pxe_filter.on_change()
    assert driver.applied[-1] == {A: True}
    assert sources.port_listings == listings


async def test_an_event_with_nothing_moved_applies_nothing() -> None:
    driver = Recorder()
    pxe_filter = make(driver, Sources(known={A}))
    await pxe_filter.reconcile()
    assert await pxe_filter.on_change() == 0
    assert len(driver.applied) == 1


async def test_concurrent_events_share_reads_of_the_node_cache() -> None:
    sources = Sources(known={A, B})
    driver = Recorder()
    pxe_filter = make(driver, sources)
    await pxe_filter.reconcile()
    reads = sources.cache_reads
    sources.active = {A, B}
    await asyncio.gather(*(pxe_filter.on_change() for _ in range(10)))
    assert sources.cache_reads - reads <= 2
    assert verdicts(driver, [A, B]) == {A: True, B: True}


async def test_an_introspection_ended_without_event_is_denied_at_the_next_reconcile() -> None:
    sources = Sources(known={A}, active={A})
    driver = Recorder()
    pxe_filter = make(driver, sources)
    await pxe_filter.reconcile()
    assert verdicts(driver, [A]) == {A: True}
    sources.active = set()  # e.g. processing finished; nobody called on_change
    await pxe_filter.reconcile()
    assert verdicts(driver, [A]) == {A: False}


async def test_noop_filter_never_lists_ports() -> None:
    sources = Sources(known={A})
    pxe_filter = make(NoopDriver(False), sources)
    await pxe_filter.reconcile()
    assert sources.port_listings == 0


# --- the dnsmasq (hosts dir) driver ---------------------------------------------------------


async def test_hostsdir_start_empties_the_dir(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    (hosts / A).write_text(f"{A},ignore\n")
    await HostsDirDriver(hosts, False).start()
    assert list(hosts.iterdir()) == []


@pytest.mark.parametrize("deny_unknown", [False, True])
async def test_hostsdir_writes_one_file_per_mac_and_rewrites_it_in_place(
        tmp_path: Path, deny_unknown: bool) -> None:
    hosts = tmp_path / "hosts"
    sources = Sources(known={A, B})
    driver = HostsDirDriver(hosts, deny_unknown)
    pxe_filter = make(driver, sources)
    await pxe_filter.start()
    await pxe_filter.reconcile()

    sources.active = {A}
    await pxe_filter.on_change()
    assert (hosts / A).read_text() == f"{A}\n"
    inode = (hosts / A).stat().st_ino
    sources.active = set()
    await pxe_filter.on_change()
    assert (hosts / A).read_text() == f"{A},ignore\n"
    sources.active = {A}
    await pxe_filter.on_change()
    assert (hosts / A).read_text() == f"{A}\n"
    assert (hosts / A).stat().st_ino == inode  # rewritten, never deleted


async def test_hostsdir_event_costs_one_file_write_whatever_the_number_of_ports(
        tmp_path: Path) -> None:
    ports = {f"52:54:00:20:{i // 256:02x}:{i % 256:02x}" for i in range(2000)}
    sources = Sources(known=ports | {A})
    driver = HostsDirDriver(tmp_path / "hosts", False)
    pxe_filter = make(driver, sources)
    await pxe_filter.start()
    await pxe_filter.reconcile()
    assert driver.writes == 2001

    sources.active = {A}
    await pxe_filter.on_change()
    assert driver.writes == 2002
    sources.active = set()
    await pxe_filter.on_change()
    assert driver.writes == 2003


async def test_hostsdir_with_deny_unknown_writes_files_only_to_let_macs_in(tmp_path: Path
                                                                         ) -> None:
    hosts = tmp_path / "hosts"
    sources = Sources(known={B})
    driver = HostsDirDriver(hosts, True)
    pxe_filter = make(driver, sources)
    await pxe_filter.start()
    await pxe_filter.reconcile()
    assert list(hosts.iterdir()) == []  # B, like any unknown MAC, has no entry: ignored
    sources.active = {A}
    await pxe_filter.on_change()
    assert sorted(p.name for p in hosts.iterdir()) == [A]
    assert (hosts / A).read_text() == f"{A}\n"


# --- the iptables driver --------------------------------------------------------------------


class FakeIptables:
    """Records commands; `iptables -S <chain>` answers from the rules it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], str | None]] = []
        self.rules: list[str] = []

    async def __call__(self, argv: Sequence[str], stdin: str | None) -> tuple[int, str]:
        argv = list(argv)
        self.calls.append((argv, stdin))
        if "-S" in argv:
            return 0, "\n".join(["-N ironsight-pxe", *self.rules])
        return 0, ""

    def since(self, n: int) -> list[tuple[list[str], str | None]]:
        return self.calls[n:]


IPT = ["iptables", "-w", "10"]


async def test_iptables_start_creates_the_chain_and_hooks_dhcp_on_the_interface() -> None:
    fake = FakeIptables()
    await IptablesDriver("pxe0", False, runner=fake).start()
    commands = [argv for argv, _ in fake.calls]
    assert [*IPT, "-N", "ironsight-pxe"] in commands
    assert commands[-1] == [*IPT, "-I", "INPUT", "-i", "pxe0", "-p", "udp", "--dport", "67",
                            "-j", "ironsight-pxe"]
    # leftovers of an earlier run are removed first
    assert commands.index([*IPT, "-X", "ironsight-pxe"]) < commands.index(
        [*IPT, "-N", "ironsight-pxe"])


async def test_iptables_with_deny_unknown_ends_the_chain_with_drop() -> None:
    fake = FakeIptables()
    await IptablesDriver("pxe0", True, runner=fake).start()
    assert ([*IPT, "-A", "ironsight-pxe", "-j", "DROP"], None) in fake.calls


async def test_iptables_event_is_one_rule_per_changed_mac() -> None:
    fake = FakeIptables()
    sources = Sources(known={A, B, C})
    driver = IptablesDriver("pxe0", False, runner=fake)
    pxe_filter = make(driver, sources)
    await pxe_filter.start()
    await pxe_filter.reconcile()

    n = len(fake.calls)
    sources.active = {A}
    await pxe_filter.on_change()
    assert fake.since(n) == [([*IPT, "-D", "ironsight-pxe", "-m", "mac", "--mac-source", A,
                               "-j", "DROP"], None)]
    n = len(fake.calls)
    sources.active = set()
    await pxe_filter.on_change()
    assert fake.since(n) == [([*IPT, "-A", "ironsight-pxe", "-m", "mac", "--mac-source", A,
                               "-j", "DROP"], None)]


async def test_iptables_applies_several_changes_in_one_restore_without_flushing() -> None:
    fake = FakeIptables()
    driver = IptablesDriver("pxe0", False, runner=fake)
    pxe_filter = make(driver, Sources(known={A, B, C}))
    await pxe_filter.start()
    n = len(fake.calls)
    await pxe_filter.reconcile()
    restores = [(argv, stdin) for argv, stdin in fake.since(n) if "iptables-restore" in argv]
    assert len(restores) == 1
    argv, script = restores[0]
    assert argv == ["iptables-restore", "--noflush"]
    assert script is not None
    assert sorted(script.splitlines()[1:-1]) == [
        f"-A ironsight-pxe -m mac --mac-source {m} -j DROP" for m in (A, B, C)]


async def test_iptables_with_deny_unknown_inserts_accept_rules_before_the_drop() -> None:
    fake = FakeIptables()
    sources = Sources(known=set())
    pxe_filter = make(IptablesDriver("pxe0", True, runner=fake), sources)
    await pxe_filter.start()
    await pxe_filter.reconcile()
    n = len(fake.calls)
    sources.active = {A}
    await pxe_filter.on_change()
    assert fake.since(n) == [([*IPT, "-I", "ironsight-pxe", "1", "-m", "mac", "--mac-source",
                               A, "-j", "ACCEPT"], None)]


async def test_iptables_reconcile_repairs_a_flushed_chain() -> None:
    fake = FakeIptables()
    driver = IptablesDriver("pxe0", False, runner=fake)
    pxe_filter = make(driver, Sources(known={A}))
    await pxe_filter.start()
    await pxe_filter.reconcile()
    fake.rules = []  # someone flushed the chain: the driver reads it back
    n = len(fake.calls)
    await pxe_filter.reconcile()
    assert ([*IPT, "-A", "ironsight-pxe", "-m", "mac", "--mac-source", A, "-j", "DROP"],
            None) in fake.since(n)


async def test_iptables_reconcile_reads_rules_back_case_insensitively() -> None:
    fake = FakeIptables()
    fake.rules = [f"-A ironsight-pxe -m mac --mac-source {A.upper()} -j DROP"]
    driver = IptablesDriver("pxe0", False, runner=fake)
    pxe_filter = make(driver, Sources(known={A}))
    await pxe_filter.start()
    assert (await pxe_filter.reconcile()).changed == 0


async def test_iptables_stop_removes_the_hook_and_the_chain() -> None:
    fake = FakeIptables()
    driver = IptablesDriver("pxe0", False, runner=fake)
    await driver.start()
    n = len(fake.calls)
    await driver.stop()
    commands = [argv for argv, _ in fake.since(n)]
    assert commands[0][:4] == [*IPT, "-D"] and commands[0][4] == "INPUT"
    assert commands[-2:] == [[*IPT, "-F", "ironsight-pxe"], [*IPT, "-X", "ironsight-pxe"]]
