"""discoverd's PXE side as one unit: discoverd creates it when `[pxe] enabled`, starts and
stops it with itself, calls `on_change` when an introspection starts or ends, and mounts its
boot-file routes. The replica that serves the network runs dnsmasq (DHCP) and the TFTP server
(tftp.py) on the interface's addresses; the HTTP boot files are served by every replica.

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

from ironsight.common import netns
from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError
from ironsight.common.ratelimit import RateLimiter
from ironsight.discoverd.ironic import BareMetal
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe import dnsmasq
from ironsight.discoverd.pxe.bootfiles import INITRAMFS, KERNEL, BootFiles, tftp_phase
from ironsight.discoverd.pxe.bootlog import BootLog
from ironsight.discoverd.pxe.commands import run_command
from ironsight.discoverd.pxe.dhcplog import DhcpWatch
from ironsight.discoverd.pxe.filter import (
    FilterPlace,
    MacSource,
    PxeFilter,
    PxeFilterError,
    SyncResult,
    load_driver,
)
from ironsight.discoverd.pxe.loaders import BootSetup, resolve
from ironsight.discoverd.pxe.netif import (
    InterfaceAddresses,
    interface_addresses,
    neighbour_mac,
)
from ironsight.discoverd.pxe.ownership import Ownership, ownership_for
from ironsight.discoverd.pxe.supervisor import Supervisor
from ironsight.discoverd.pxe.tftp import TftpServer, Transfer
from ironsight.discoverd.pxe.tokens import BootTokens

LOG = logging.getLogger(__name__)
DNSMASQ_LOG = logging.getLogger("ironsight.discoverd.pxe.dnsmasq")
FIRST_RETRY = 0.2
MAX_RETRY = 60.0
STARTUP_GRACE = 10.0
TFTP_PORT = 69


async def introspection_macs(cache: NodeCache) -> set[str]:
    """MACs of the introspections in progress (the node cache drops them when one ends)."""
    return await cache.introspection_macs()


OnOwnership = Callable[[str | None], Awaitable[None]]


class PxeService:
    def __init__(self, conf: Config, *, active_macs: MacSource, known_macs: MacSource,
                 prefix: Sequence[str] = (), namespace: str | None = None,
                 ownership: Ownership | None = None,
                 on_ownership: OnOwnership | None = None, cache: NodeCache | None = None,
                 limiter: RateLimiter | None = None, tftp_port: int = TFTP_PORT) -> None:
        """`namespace` puts the PXE side in another network namespace (discoverd outside
        the provisioning network's): dnsmasq, iptables and ip run through `ip netns exec`,
        and the TFTP server's sockets are made there; `prefix` runs those commands through
        another command instead. `ownership` elects the one replica that serves the network
        (see ownership.py); `on_ownership` hears the network's name when this replica takes
        it over, and None when it stops serving it. With `cache`, node boot scripts carry
        callback tokens (tokens.py); `limiter` limits the boot scripts' requests per
        address."""
        self.conf = conf
        self.namespace = namespace
        self.prefix = list(prefix) or (["ip", "netns", "exec", namespace] if namespace else [])
        self.network = conf.pxe.network or conf.pxe.interface
        self.ownership = ownership or ownership_for(conf.discoverd_database_url, self.network,
                                                    conf.state_dir)
        self.on_ownership = on_ownership
        self.directory = conf.state_dir / "pxe"
        self.driver = load_driver(conf, FilterPlace(self.directory, tuple(self.prefix)))
        self.filter = PxeFilter(self.driver, active_macs=active_macs, known_macs=known_macs)
        self.setup = BootSetup({}, dnsmasq.BootPrograms())  # resolved at start
        # the boot's phases on the nodes' timelines (bootlog.py)
        self.bootlog = (BootLog(cache, self.leases_file, neighbour=self._neighbour)
                        if cache is not None else None)
        self.boot = BootFiles(
            conf.ramdisk_dir, conf.pxe.kernel_params, lambda: self.http_url,
            http_url_ipv6=lambda: self.http_url_ipv6, loaders=lambda: self.setup.files,
            tokens=BootTokens(cache, self.leases_file, neighbour=self._neighbour)
            if cache is not None else None,
            limiter=limiter, seen=self.bootlog.fetched if self.bootlog is not None else None)
        self.dnsmasq: Supervisor | None = None
        self.tftp = TftpServer(self.boot.tftp_file, on_done=self._transferred,
                               socket_factory=partial(netns.socket_in, namespace))
        self.tftp_port = tftp_port
        self.tftp_addresses: list[str] = []
        self.watch = DhcpWatch({})
        self.http_url = conf.pxe.http_url.rstrip("/")  # resolved at start when empty
        self.http_url_ipv6 = conf.pxe.http_url_ipv6.rstrip("/")  # likewise
        self._task: asyncio.Task[None] | None = None
        self._owning: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._started = False  # this replica serves the network now

    @classmethod
    def for_discoverd(cls, conf: Config, cache: NodeCache, ironic: BareMetal,
                      on_ownership: OnOwnership | None = None,
                      limiter: RateLimiter | None = None) -> PxeService:
        # discovery on: a known machine in a rediscover state may boot the ramdisk again
        # (seen again); the others stay refused
        states = conf.auto_discovery.rediscover_states if conf.discovery else []
        return cls(conf, active_macs=partial(introspection_macs, cache),
                   known_macs=partial(ironic.list_all_port_macs, states),
                   on_ownership=on_ownership,
                   cache=cache, limiter=limiter)

    def leases_file(self) -> Path | None:
        """dnsmasq's lease file while this replica serves the network (else None)."""
        return self.directory / dnsmasq.LEASES_NAME if self._started else None

    async def _neighbour(self, address: str) -> str | None:
        return await neighbour_mac(address, self.conf.pxe.interface, self.prefix)

    @property
    def serving(self) -> bool:
        return self._started

    def routes(self) -> list[Route]:
        return self.boot.routes()

    async def start(self) -> None:
        """Check and write the configuration; then serve the network if no other replica
        does (a refusal of the filter's mechanism stops the service then, as a bad option
        would), and keep trying to take it over otherwise."""
        addresses = await self._check()
        self.setup = resolve(self.conf.pxe)
        self.setup.log()
        self.watch = DhcpWatch(self.setup.unserved)
        ipv6 = bool(self.conf.pxe.dhcp_range_ipv6)
        self.tftp_addresses = addresses.ipv4 + (addresses.ipv6 if ipv6 else [])
        settings = dnsmasq.DnsmasqSettings(
            interface=self.conf.pxe.interface, dhcp_range=self.conf.pxe.dhcp_range,
            http_url=self.http_url, directory=self.directory, programs=self.setup.programs,
            router_advertisements=self.conf.pxe.router_advertisements,
            ping_before_offer=self.conf.pxe.ping_before_offer,
            filter_options=tuple(self.driver.dnsmasq_options()),
            user="root" if os.geteuid() == 0 else None,
            dhcp_range_ipv6=self.conf.pxe.dhcp_range_ipv6, http_url_ipv6=self.http_url_ipv6,
            tftp_ipv6=_host(self.http_url_ipv6) if ipv6 else "")
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
            except OSError as exc:
                await self.ownership.release()
                raise ConfigError(f"[pxe] interface: cannot serve TFTP on {self.network}: "
                                  f"{exc}") from None
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
        try:
            await self.tftp.start(self.tftp_addresses, self.tftp_port)
        except OSError:
            with contextlib.suppress(Exception):
                await self.filter.stop()
            raise
        self._started = True
        self._task = asyncio.get_running_loop().create_task(self._sync_loop(),
                                                            name="pxe-filter-sync")
        LOG.info("PXE: serving %s%s on %s for network %s (filter %s%s), boot script "
                 "%s/boot.ipxe, TFTP on %s", self.conf.pxe.dhcp_range,
                 f" and {self.conf.pxe.dhcp_range_ipv6}" if self.conf.pxe.dhcp_range_ipv6
                 else "", self.conf.pxe.interface, self.network, self.driver.name,
                 ", unknown MACs denied" if self.driver.deny_unknown else "", self.http_url,
                 ", ".join(self.tftp_addresses))
        if self.on_ownership is not None:
            await self.on_ownership(self.network)

    async def _stand_down(self) -> None:
        self._started = False
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self.tftp.stop()
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
                    try:
                        await self._serve()
                    except BaseException:
                        await self.ownership.release()  # another replica may do better
                        raise
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
        if self.bootlog is not None:
            self.bootlog.dhcp_line(line)
        unserved = self.watch.feed(line)
        if unserved is not None:
            LOG.warning("%s", unserved)
        DNSMASQ_LOG.log(dnsmasq.log_level(line) if lease is None else logging.DEBUG,
                        "%s", line)

    def _transferred(self, done: Transfer) -> None:
        """Each TFTP transfer, for the operator reading how far a node's boot got (the log),
        and the node's timeline when it is complete."""
        if done.error is not None:
            LOG.debug("PXE: TFTP of %s to %s ended: %s", done.filename, done.host, done.error)
            return
        LOG.info("PXE: %s fetched %s over TFTP (%d bytes in %.2f s)", done.host,
                 done.filename, done.sent, done.seconds)
        if self.bootlog is not None:
            self.bootlog.fetched(tftp_phase(done.filename), done.host, file=done.filename,
                                 via="tftp", bytes=done.sent, seconds=round(done.seconds, 3))

    # --- checks at start ------------------------------------------------------------------

    async def _check(self) -> InterfaceAddresses:
        """Refuse a configuration that cannot work (ConfigError names the option); warn about
        one that works badly. Resolves the boot URLs; returns the interface's addresses."""
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
            _check_url("http_url", self.http_url)
        elif addresses.ipv4:
            self.http_url = f"http://{addresses.ipv4[0]}:{self.conf.introspection.port}"
        else:
            raise ConfigError(f"[pxe] http_url: empty, and interface {pxe.interface} has no "
                              "IPv4 address to build it from; set it")
        if pxe.dhcp_range_ipv6:
            self.http_url_ipv6 = self._ipv6_url(addresses)
        elif self.http_url_ipv6:
            _check_url("http_url_ipv6", self.http_url_ipv6)
        self._warn(addresses.ipv6)
        return addresses

    def _ipv6_url(self, addresses: InterfaceAddresses) -> str:
        """The base URL for IPv6 clients: `[pxe] http_url_ipv6`, else the interface's first
        global IPv6 address with http_url's scheme and port."""
        if self.http_url_ipv6:
            _check_url("http_url_ipv6", self.http_url_ipv6)
            if ":" not in _host(self.http_url_ipv6):
                raise ConfigError(f"[pxe] http_url_ipv6: {self.http_url_ipv6!r} must name "
                                  "an IPv6 address: it is also where IPv6 clients fetch "
                                  "loaders over TFTP")
            return self.http_url_ipv6
        if not addresses.ipv6:
            raise ConfigError(f"[pxe] dhcp_range_ipv6: interface {self.conf.pxe.interface} "
                              "has no global IPv6 address to serve DHCPv6 and TFTP on")
        url = urllib.parse.urlsplit(self.http_url)
        return f"{url.scheme}://[{addresses.ipv6[0]}]:{url.port or 80}"

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
        if conf.pxe.dhcp_range_ipv6 and conf.pxe_filter.driver == "iptables":
            LOG.warning("[pxe_filter] driver = iptables filters DHCPv4 only: with [pxe] "
                        "dhcp_range_ipv6, DHCPv6 answers every MAC (use driver = dnsmasq)")
        if conf.pxe_filter.driver == "noop" and conf.pxe_filter.deny_unknown_macs:
            LOG.warning("[pxe_filter] deny_unknown_macs has no effect with driver = noop")
        if conf.discovery and conf.pxe_filter.deny_unknown_macs:
            LOG.warning("[pxe_filter] deny_unknown_macs has no effect with auto-discovery on: "
                        "unknown MACs boot the discovery ramdisk")


def _check_url(option: str, value: str) -> None:
    url = urllib.parse.urlsplit(value)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ConfigError(f"[pxe] {option}: {value!r} is not an http:// URL")


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).hostname or ""

