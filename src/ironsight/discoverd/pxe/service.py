"""discoverd's PXE side as one unit: discoverd creates it when `[pxe] enabled`, starts and
stops it with itself, calls `on_change` when an introspection starts or ends, and mounts its
boot-file routes.

dnsmasq starts only after the filter's first full sync: before that the filter does not know
which MACs the bare-metal service deploys, and dnsmasq must not answer them. If that sync
fails (the bare-metal API is not up yet), it is retried with a backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import shutil
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path

from starlette.routing import Route

from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError
from ironsight.common.ratelimit import RateLimiter
from ironsight.discoverd.ironic import BareMetal
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe import dnsmasq
from ironsight.discoverd.pxe.bootfiles import INITRAMFS, KERNEL, BootFiles
from ironsight.discoverd.pxe.commands import run_command
from ironsight.discoverd.pxe.filter import (
    FilterPlace,
    MacSource,
    PxeFilter,
    PxeFilterError,
    SyncResult,
    load_driver,
)
from ironsight.discoverd.pxe.netif import interface_addresses
from ironsight.discoverd.pxe.ownership import Ownership, ownership_for
from ironsight.discoverd.pxe.supervisor import Supervisor
from ironsight.discoverd.pxe.tokens import BootTokens

LOG = logging.getLogger(__name__)
DNSMASQ_LOG = logging.getLogger("ironsight.discoverd.pxe.dnsmasq")
FIRST_RETRY = 0.2
MAX_RETRY = 60.0
STARTUP_GRACE = 10.0


async def introspection_macs(cache: NodeCache) -> set[str]:
    """MACs of the introspections in progress (the node cache drops them when one ends)."""
    return await cache.introspection_macs()


OnOwnership = Callable[[str | None], Awaitable[None]]


class PxeService:
    def __init__(self, conf: Config, *, active_macs: MacSource, known_macs: MacSource,
                 prefix: Sequence[str] = (), ownership: Ownership | None = None,
                 on_ownership: OnOwnership | None = None, cache: NodeCache | None = None,
                 limiter: RateLimiter | None = None) -> None:
        """`prefix` runs dnsmasq, iptables and ip through a command such as
        `ip netns exec NS` (discoverd outside the provisioning network's namespace).
        `ownership` elects the one replica that serves the network (see ownership.py);
        `on_ownership` hears the network's name when this replica takes it over, and None
        when it stops serving it. With `cache`, node boot scripts carry callback tokens
        (tokens.py); `limiter` limits the boot scripts' requests per address."""
        self.conf = conf
        self.prefix = list(prefix)
        self.network = conf.pxe.network or conf.pxe.interface
        self.ownership = ownership or ownership_for(conf.discoverd_database_url, self.network,
                                                    conf.state_dir)
        self.on_ownership = on_ownership
        self.directory = conf.state_dir / "pxe"
        self.driver = load_driver(conf, FilterPlace(self.directory, tuple(self.prefix)))
        self.filter = PxeFilter(self.driver, active_macs=active_macs, known_macs=known_macs)
        self.boot = BootFiles(
            conf.ramdisk_dir, conf.pxe.kernel_params, lambda: self.http_url,
            tokens=BootTokens(cache, self.leases_file) if cache is not None else None,
            limiter=limiter)
        self.dnsmasq: Supervisor | None = None
        self.http_url = conf.pxe.http_url.rstrip("/")  # resolved at start when empty
        self._task: asyncio.Task[None] | None = None
        self._owning: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._started = False  # this replica serves the network now

    @classmethod
    def for_discoverd(cls, conf: Config, cache: NodeCache, ironic: BareMetal,
                      on_ownership: OnOwnership | None = None,
                      limiter: RateLimiter | None = None) -> PxeService:
        return cls(conf, active_macs=partial(introspection_macs, cache),
                   known_macs=ironic.list_all_port_macs, on_ownership=on_ownership,
                   cache=cache, limiter=limiter)

    def leases_file(self) -> Path | None:
        """dnsmasq's lease file while this replica serves the network (else None)."""
        return self.directory / dnsmasq.LEASES_NAME if self._started else None

    @property
    def serving(self) -> bool:
        return self._started

    def routes(self) -> list[Route]:
        return self.boot.routes()

    async def start(self) -> None:
        """Check and write the configuration; then serve the network if no other replica
        does (a refusal of the filter's mechanism stops the service then, as a bad option
        would), and keep trying to take it over otherwise."""
        ipxe_binary = await self._check()
        settings = dnsmasq.DnsmasqSettings(
            interface=self.conf.pxe.interface, dhcp_range=self.conf.pxe.dhcp_range,
            http_url=self.http_url, directory=self.directory, ipxe_binary=ipxe_binary,
            router_advertisements=self.conf.pxe.router_advertisements,
            ping_before_offer=self.conf.pxe.ping_before_offer,
            filter_options=tuple(self.driver.dnsmasq_options()),
            user="root" if os.geteuid() == 0 else None)
        conf_file = await asyncio.to_thread(dnsmasq.write_config, settings)
        code, out = await run_command([*self.prefix, self.conf.pxe.dnsmasq_path, "--test",
                                       f"--conf-file={conf_file}"])
        if code != 0:
            raise ConfigError(f"dnsmasq refuses the configuration written from [pxe] "
                              f"({conf_file}): {out}")
        self.dnsmasq = Supervisor(
            [*self.prefix, *dnsmasq.command(self.conf.pxe.dnsmasq_path, conf_file)],
            name="dnsmasq", on_line=self._dnsmasq_line,
            pid_file=self.directory / "dnsmasq.pid")
        if await self.ownership.try_acquire():
            try:
                await self._serve()
            except PxeFilterError as exc:
                await self.ownership.release()
                raise ConfigError(f"[pxe_filter] driver = {self.driver.name}: cannot set up "
                                  f"the filter: {exc}") from None
        else:
            LOG.info("PXE: another replica serves network %s; standing by", self.network)
        self._owning = asyncio.get_running_loop().create_task(self._ownership_loop(),
                                                              name="pxe-ownership")

    async def stop(self) -> None:
        if self._owning is not None:
            self._owning.cancel()
            await asyncio.gather(self._owning, return_exceptions=True)
            self._owning = None
        if self._started:
            await self._stand_down()
        await self.ownership.release()

    async def _serve(self) -> None:
        """Take the network over: a filter built from scratch, dnsmasq once it is synced."""
        assert self.dnsmasq is not None
        self.dnsmasq.end_stale()
        await self.filter.start()
        self._started = True
        self._task = asyncio.get_running_loop().create_task(self._sync_loop(),
                                                            name="pxe-filter-sync")
        LOG.info("PXE: serving %s on %s for network %s (filter %s%s), boot script "
                 "%s/boot.ipxe", self.conf.pxe.dhcp_range, self.conf.pxe.interface,
                 self.network, self.driver.name,
                 ", unknown MACs denied" if self.driver.deny_unknown else "", self.http_url)
        if self.on_ownership is not None:
            await self.on_ownership(self.network)

    async def _stand_down(self) -> None:
        self._started = False
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self.dnsmasq is not None:
            await self.dnsmasq.stop()
        try:
            await self.filter.stop()
        except Exception:
            LOG.exception("PXE filter clean-up failed")
        if self.on_ownership is not None:
            await self.on_ownership(None)

    async def _ownership_loop(self) -> None:
        """A standby asks for the network every `[pxe] takeover_interval`; the owner checks
        it still holds it as often, and stops serving at once when it does not."""
        while True:
            await asyncio.sleep(self.conf.pxe.takeover_interval)
            try:
                if self._started:
                    if not await self.ownership.still_held():
                        LOG.error("PXE: ownership of network %s lost; dnsmasq stopped",
                                  self.network)
                        await self._stand_down()
                elif await self.ownership.try_acquire():
                    LOG.warning("PXE: taking over network %s", self.network)
                    await self._serve()
            except Exception:
                LOG.exception("PXE ownership round failed; retrying")

    async def on_change(self) -> None:
        """After an introspection started or ended. Never raises: a failure here must not
        fail the introspection; the next full sync (brought forward) repairs it."""
        if not self._started:
            return
        try:
            await self.filter.on_change()
        except Exception:
            LOG.exception("PXE filter update failed; a full sync follows")
            self._wake.set()

    async def reconcile(self) -> SyncResult:
        return await self.filter.reconcile()

    async def _sync_loop(self) -> None:
        period = self.conf.pxe_filter.sync_period
        loop = asyncio.get_running_loop()
        # In `ironsight serve` the bare-metal API starts listening just after this starts:
        # the first attempts may fail, which is only worth a warning if it lasts.
        quiet_until = loop.time() + STARTUP_GRACE
        retry = FIRST_RETRY
        while True:
            self._wake.clear()
            try:
                await self.reconcile()
            except Exception as exc:
                waiting = "" if self._dnsmasq_started else " (dnsmasq waits for it)"
                LOG.log(logging.INFO if loop.time() < quiet_until else logging.WARNING,
                        "PXE filter sync failed%s: %s; retrying in %.1f s", waiting, exc, retry)
                await self._sleep(retry)
                retry = min(retry * 2, MAX_RETRY)
                continue
            retry = FIRST_RETRY
            if not self._dnsmasq_started and self.dnsmasq is not None:
                self.dnsmasq.start()
            await self._sleep(period if period > 0 else None)

    @property
    def _dnsmasq_started(self) -> bool:
        return self.dnsmasq is not None and self.dnsmasq.started

    async def _sleep(self, seconds: float | None) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    def _dnsmasq_line(self, line: str) -> None:
        lease = dnsmasq.parse_lease(line)
        if lease is not None:
            LOG.info("PXE: %s got the address %s", *lease)
        DNSMASQ_LOG.log(dnsmasq.log_level(line) if lease is None else logging.DEBUG,
                        "%s", line)

    # --- checks at start ------------------------------------------------------------------

    async def _check(self) -> Path | None:
        """Refuse a configuration that cannot work (ConfigError names the option); warn about
        one that works badly. Returns the iPXE binary to serve over TFTP, if any."""
        pxe = self.conf.pxe
        if not pxe.interface:
            raise ConfigError("[pxe] interface: required when [pxe] enabled is true (the "
                              "provisioning network interface dnsmasq serves)")
        if not pxe.dhcp_range:
            raise ConfigError("[pxe] dhcp_range: required when [pxe] enabled is true, e.g. "
                              "10.20.0.100,10.20.0.199,255.255.255.0,10m")
        if shutil.which(pxe.dnsmasq_path) is None:
            raise ConfigError(f"[pxe] dnsmasq_path: program {pxe.dnsmasq_path!r} not found "
                              "(install the dnsmasq-base package)")
        for program in self.driver.programs:
            if shutil.which(program) is None:
                raise ConfigError(f"[pxe_filter] driver: {self.driver.name} needs the program "
                                  f"{program}, which is not installed (install its package, "
                                  "or use driver = dnsmasq)")
        addresses = await interface_addresses(pxe.interface, self.prefix)
        if addresses is None:
            raise ConfigError(f"[pxe] interface: there is no network interface named "
                              f"{pxe.interface!r}")
        if self.http_url:
            url = urllib.parse.urlsplit(self.http_url)
            if url.scheme not in ("http", "https") or not url.hostname:
                raise ConfigError(f"[pxe] http_url: {pxe.http_url!r} is not an http:// URL")
        elif addresses.ipv4:
            self.http_url = f"http://{addresses.ipv4[0]}:{self.conf.introspection.port}"
        else:
            raise ConfigError(f"[pxe] http_url: empty, and interface {pxe.interface} has no "
                              "IPv4 address to build it from; set it")
        self._warn(addresses.ipv6)
        binary = Path(pxe.ipxe_binary)
        if not binary.is_file():
            LOG.warning("[pxe] ipxe_binary %s does not exist: only NICs with an iPXE ROM can "
                        "boot (install the ipxe package for plain PXE ROMs)", binary)
            return None
        return binary

    def _warn(self, ipv6: list[str]) -> None:
        conf = self.conf
        if conf.pxe.router_advertisements and not ipv6:
            LOG.warning("[pxe] router_advertisements: interface %s has no global IPv6 "
                        "address, so no advertisement is sent and iPXE waits ~13 s for one",
                        conf.pxe.interface)
        with contextlib.suppress(ValueError):
            if ipaddress.ip_address(conf.introspection.host).is_loopback:
                LOG.warning("[introspection] host is %s: booting nodes cannot reach %s unless "
                            "something forwards it", conf.introspection.host, self.http_url)
        for name in (KERNEL, INITRAMFS):
            if not (conf.ramdisk_dir / name).is_file():
                LOG.warning("The discovery ramdisk is missing (%s): nodes will not boot until "
                            "`ironsight ramdisk build` makes it", conf.ramdisk_dir / name)
                break
        if conf.pxe_filter.driver == "noop" and conf.pxe_filter.deny_unknown_macs:
            LOG.warning("[pxe_filter] deny_unknown_macs has no effect with driver = noop")
