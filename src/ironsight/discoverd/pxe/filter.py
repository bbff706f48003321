"""Which MACs may DHCP from discoverd's dnsmasq, and keeping a driver's mechanism in line.

The rule (the design's, plus ironic-inspector's deny_unknown_macs): a MAC under introspection
is allowed; a MAC the bare-metal service knows (a port) and that is not under introspection
is denied, so that nodes deployed by the bare-metal service never boot our ramdisk; any other
MAC is allowed unless `deny_unknown_macs`.

Two paths keep the driver right. An event (an introspection started or ended) reads only the
node cache's MACs and changes only the MACs that entered or left it: its cost does not depend
on the number of ports. A periodic reconcile lists all ports and repairs whatever drifted.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ironsight.common import plugins
from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError, IronsightError
from ironsight.common.ids import MAC_RE

LOG = logging.getLogger(__name__)

MacSource = Callable[[], Awaitable[set[str]]]


class PxeFilterError(IronsightError):
    """The filter's mechanism (iptables, the hosts dir) refused a change."""


def ethernet_macs(values: Iterable[str]) -> set[str]:
    """Lowercase Ethernet MACs only: other addresses (InfiniBand GUIDs) cannot be filtered
    by MAC, and a value that is not a MAC must never reach a file name or a command."""
    macs = {v.strip().lower() for v in values}
    return {m for m in macs if MAC_RE.match(m)}


def denies_unknown(conf: Config) -> bool:
    """`deny_unknown_macs`, unless discovery is on: then unknown MACs are what it is for."""
    return conf.pxe_filter.deny_unknown_macs and not conf.discovery


def is_allowed(mac: str, *, active: set[str], known: set[str], deny_unknown: bool) -> bool:
    return mac in active or (mac not in known and not deny_unknown)


@dataclass(frozen=True)
class FilterPlace:
    """Where a driver works: its own directory, and the command prefix (say `ip netns exec
    NS`) that programs touching the provisioning network run under."""

    directory: Path
    prefix: tuple[str, ...] = ()


class FilterDriver(abc.ABC):
    """A mechanism that lets a MAC's DHCP requests reach dnsmasq or not: a plugin of the
    `ironsight.pxe_filters` entry point group, named by `[pxe_filter] driver`.

    `entries` holds the MACs the mechanism has an explicit verdict for (True: allowed); any
    other MAC gets the default verdict (allowed unless deny_unknown_macs)."""

    name = "abstract"
    # Programs the driver runs: one that is missing stops discoverd at start, naming it.
    programs: tuple[str, ...] = ()

    def __init__(self, deny_unknown: bool) -> None:
        self.deny_unknown = deny_unknown
        self.entries: dict[str, bool] = {}

    @classmethod
    def from_config(cls, conf: Config, place: FilterPlace) -> FilterDriver:
        """The driver as configured; the base takes only `[pxe_filter] deny_unknown_macs`."""
        return cls(denies_unknown(conf))

    def dnsmasq_options(self) -> list[str]:
        """Lines this driver needs in dnsmasq's configuration."""
        return []

    @abc.abstractmethod
    async def start(self) -> None:
        """Set up from nothing (before dnsmasq starts), dropping any leftover state."""

    @abc.abstractmethod
    async def stop(self) -> None: ...

    async def refresh(self) -> None:  # noqa: B027 (most mechanisms have nothing to re-read)
        """Re-read the mechanism's real state into `entries` (before a reconcile)."""

    @abc.abstractmethod
    async def apply(self, changes: Mapping[str, bool]) -> None:
        """Give each MAC its new verdict, touching only these MACs."""


def load_driver(conf: Config, place: FilterPlace) -> FilterDriver:
    """The configured driver; a plugin that is not a FilterDriver is refused, naming it."""
    option = "[pxe_filter] driver"
    cls = plugins.load(plugins.PXE_FILTERS, conf.pxe_filter.driver, option)
    if not (isinstance(cls, type) and issubclass(cls, FilterDriver)):
        raise ConfigError(f"{option}: {conf.pxe_filter.driver!r} is not a FilterDriver")
    return cls.from_config(conf, place)


class NoopDriver(FilterDriver):
    """Every MAC may boot."""

    name = "noop"

    async def start(self) -> None:
        self.entries = {}

    async def stop(self) -> None:
        pass

    async def apply(self, changes: Mapping[str, bool]) -> None:
        self.entries.update(changes)


@dataclass(frozen=True)
class SyncResult:
    known: int
    active: int
    changed: int
    seconds: float


class PxeFilter:
    def __init__(self, driver: FilterDriver, *, active_macs: MacSource,
                 known_macs: MacSource) -> None:
        self.driver = driver
        self.deny_unknown = driver.deny_unknown
        self._active_macs = active_macs
        self._known_macs = known_macs
        self._active: set[str] = set()
        self._known: set[str] = set()
        self._lock = asyncio.Lock()
        self._requested = 0  # events asked for
        self._covered = 0  # events whose change a finished update has seen

    def allowed(self, mac: str) -> bool:
        return is_allowed(mac, active=self._active, known=self._known,
                          deny_unknown=self.deny_unknown)

    async def start(self) -> None:
        await self.driver.start()

    async def stop(self) -> None:
        await self.driver.stop()

    async def on_change(self) -> int:
        """Follow the node cache after an introspection started or ended; returns the number
        of MACs changed. Concurrent events share one read of the cache."""
        self._requested += 1
        ticket = self._requested
        async with self._lock:
            if self._covered >= ticket:
                return 0
            covers = self._requested  # this read comes after every change asked for so far
            active = ethernet_macs(await self._active_macs())
            moved = active ^ self._active
            # MACs leaving introspection were ports when it started: deny them now, even if
            # the last reconcile predates their port (the next one corrects a deleted port).
            self._known |= self._active - active
            self._active = active
            changed = await self._apply(moved)
            self._covered = covers
            return changed

    async def reconcile(self) -> SyncResult:
        """Bring the driver in line with all ports and all introspections."""
        began = time.monotonic()
        if isinstance(self.driver, NoopDriver):
            return SyncResult(0, 0, 0, 0.0)
        # Slow (paged API calls): outside the lock, so that events are not held up.
        known = ethernet_macs(await self._known_macs())
        async with self._lock:
            self._requested += 1
            covers = self._requested
            active = ethernet_macs(await self._active_macs())
            # As for an event: MACs that left introspection since the last update are denied.
            self._known = known | (self._active - active)
            self._active = active
            await self.driver.refresh()
            changed = await self._apply(known | self._active | set(self.driver.entries))
            self._covered = covers
        result = SyncResult(len(known), len(self._active), changed,
                            time.monotonic() - began)
        LOG.log(logging.INFO if changed else logging.DEBUG,
                "PXE filter (%s) synced: %d ports, %d MACs under introspection, %d changed "
                "in %.3f s", self.driver.name, result.known, result.active, result.changed,
                result.seconds)
        return result

    async def _apply(self, macs: Iterable[str]) -> int:
        default = not self.deny_unknown
        changes = {}
        for mac in macs:
            verdict = self.allowed(mac)
            if self.driver.entries.get(mac, default) != verdict:
                changes[mac] = verdict
        if changes:
            LOG.debug("PXE filter: %s", ", ".join(
                f"{mac} {'allowed' if ok else 'denied'}" for mac, ok in sorted(changes.items())))
            await self.driver.apply(changes)
        return len(changes)
