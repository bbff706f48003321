"""Service commands: `serve`, `db upgrade`, `config sample`."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import logging
import os
import signal
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import click

from ironsight.cli.state_dir import check_state_dir
from ironsight.common import config as configmod
from ironsight.common import logs
from ironsight.common.auth.strategy import check_listeners
from ironsight.common.exceptions import ConfigError, DatabaseUnavailable
from ironsight.common.files import private_dir

if TYPE_CHECKING:
    from ironsight.common.asgi_call import AsgiCall

LOG = logging.getLogger(__name__)


def _load(config_file: str | None) -> configmod.Config:
    try:
        return configmod.load(config_file)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def _check_key_file(conf: configmod.Config) -> None:
    """A configured secrets key file that cannot be used stops `serve` before it starts,
    with one line naming the file."""
    if conf.DEFAULT.secrets_key_file:
        from pathlib import Path

        from ironsight.common.keyfile import KeyFile

        try:
            KeyFile(Path(conf.DEFAULT.secrets_key_file).expanduser())
        except ConfigError as exc:
            raise click.ClickException(f"[DEFAULT] secrets_key_file: {exc}") from None


config_file_option = click.option(
    "--config-file", type=click.Path(dir_okay=False), default=None,
    help="INI configuration file (default: embedded defaults).")


def run(main: Any) -> None:
    """Run the services' event loop: uvloop when present (≈30% less CPU per request)."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)


@dataclass(frozen=True)
class Listener:
    name: str
    app: Any
    host: str
    port: int
    cert_file: str = ""
    key_file: str = ""

    @property
    def url(self) -> str:
        scheme = "https" if self.cert_file else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"


def _uvicorn(listener: Listener, debug: bool) -> Any:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(
        listener.app, host=listener.host, port=listener.port, log_config=None,
        access_log=debug, lifespan="off", server_header=False, proxy_headers=False,
        ssl_certfile=listener.cert_file or None, ssl_keyfile=listener.key_file or None))
    # We own the signals: one handler stops every server of this process, then cleans up.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    return server


def _check_tls(section: str, cert_file: str, key_file: str) -> None:
    if bool(cert_file) != bool(key_file):
        raise ConfigError(f"[{section}] cert_file and key_file go together: set both for "
                          "HTTPS, or neither")
    for name, path in (("cert_file", cert_file), ("key_file", key_file)):
        if path and not os.access(path, os.R_OK):
            raise ConfigError(f"[{section}] {name}: cannot read {path}")


def listeners(conf: configmod.Config, only: str | None, baremetal: Any, discoverd: Any
              ) -> list[Listener]:
    """Every socket this process serves, checked: TLS files readable, and no API without
    authentication beyond loopback (the ramdisk listeners are open by design)."""
    found: list[Listener] = []
    if baremetal is not None:
        api = conf.api
        _check_tls("api", api.cert_file, api.key_file)
        found.append(Listener("Bare-metal API", baremetal.app, api.host, api.port,
                              api.cert_file, api.key_file))
        if baremetal.console_app is not None:
            found.append(Listener("Web console", baremetal.console_app, conf.console.host,
                                  conf.console.port, api.cert_file, api.key_file))
    if discoverd is not None:
        section = conf.introspection
        _check_tls("introspection", section.cert_file, section.key_file)
        found.append(Listener("discoverd API", discoverd.app, section.host, section.port,
                              section.cert_file, section.key_file))
    check_listeners(conf, [(item.name, item.host) for item in found])
    if baremetal is not None and baremetal.ramdisk_app is not None:
        found += [Listener("Bare-metal ramdisk endpoints", baremetal.ramdisk_app, host,
                           conf.api.ramdisk_port, conf.api.cert_file, conf.api.key_file)
                  for host in addresses(conf.api.ramdisk_host)]
    if discoverd is not None and discoverd.ramdisk_app is not None:
        # Plain HTTP: iPXE and the ramdisk have no CA to check a certificate against.
        found += [Listener("discoverd ramdisk endpoints", discoverd.ramdisk_app, host,
                           conf.introspection.ramdisk_port)
                  for host in addresses(conf.introspection.ramdisk_host)]
    return found


def addresses(option: str) -> list[str]:
    """The addresses of a `ramdisk_host` option: one, or several comma-separated (an IPv4
    and an IPv6 one, for nodes of either family)."""
    return [item.strip().strip("[]") for item in option.split(",") if item.strip()]


Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _resolve(host: str, port: int, passive: bool = False) -> list[Address]:
    """The addresses `host` (a literal or a name) stands for, in resolver order: what
    asyncio binds (`passive`, for a listener) or connects to (for a client)."""
    literal = host.strip("[]")
    if not literal:  # a listener: asyncio binds every address of both families
        return [ipaddress.ip_address("0.0.0.0"), ipaddress.ip_address("::")] if passive else []
    with contextlib.suppress(ValueError):
        return [ipaddress.ip_address(literal)]
    try:
        found = socket.getaddrinfo(literal, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE if passive else 0)
    except OSError:
        return []
    addresses: list[Address] = []
    for *_, sockaddr in found:
        with contextlib.suppress(ValueError):
            address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
            if address not in addresses:
                addresses.append(address)
    return addresses


def _is_own(address: Address) -> bool:
    """Whether `address` is one of this machine's (a socket can be bound to it)."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((str(address), 0))
    except OSError:
        return False
    return True


def _accepts(bound: list[Address], address: Address) -> bool:
    """Whether a listener bound to `bound` takes a connection to `address` (asyncio binds
    `::` IPv6 only: an IPv4 connection never reaches it)."""
    return any(address == item or (item.is_unspecified and item.version == address.version
                                   and _is_own(address)) for item in bound)


def _source(address: Address) -> str:
    """The address a connection to `address` comes from, as the kernel picks it (127.0.0.1
    for any loopback address): what the listener's application sees as its client."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:  # connect() sends nothing
        sock.connect((str(address), 9))
        return str(sock.getsockname()[0])


def loopback_client(url: str, host: str, port: int, tls: bool
                    ) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """When `url` reaches this process's own listener (plain HTTP on `host`:`port`): the
    (server, client) addresses of such a connection, as that listener's application would
    see them. None when the URL may reach anything else: HTTPS (the listener's or the
    URL's), another port, credentials in the URL, a name any of whose addresses another
    listener may hold."""
    parts = urlsplit(url)
    try:
        url_port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if tls or parts.scheme != "http" or url_port != port or parts.username is not None:
        return None
    targets = _resolve(parts.hostname or "", port)
    bound = _resolve(host, port, passive=True)
    if not targets or not all(_accepts(bound, target) for target in targets):
        return None
    return (str(targets[0]), port), (_source(targets[0]), 0)


def baremetal_in_process(conf: configmod.Config, baremetal: Any) -> AsgiCall | None:
    """How discoverd reaches the bare-metal API when both services run in this process: an
    `AsgiCall` of the bare-metal application itself when `[introspection] ironic_url` names
    its listener of this very process (no HTTP, the same requests and answers:
    discoverd/ironic.py), else None (over HTTP, as a separate discoverd does)."""
    from ironsight.common.asgi_call import AsgiCall

    url, api = conf.introspection.ironic_url, conf.api
    if baremetal is None:
        LOG.info("discoverd calls the bare-metal API over HTTP at %s", url)
        return None
    ends = loopback_client(url, api.host, api.port, bool(api.cert_file))
    if ends is None:
        LOG.info("discoverd calls the bare-metal API over HTTP at %s (not this process's "
                 "plain-HTTP bare-metal listener)", url)
        return None
    LOG.info("discoverd calls the bare-metal API in-process (%s is this process's bare-metal "
             "listener; requests seen from %s)", url, ends[1][0])
    return AsgiCall(baremetal.app, server=ends[0], client=ends[1],
                    access_log=conf.DEFAULT.debug)


def local_discoverd_url(conf: configmod.Config, only: str | None) -> str | None:
    """discoverd's API URL when it runs in this process and `[discoverd] service_url` names
    none: the web console reads fleet, inspections and discovery there."""
    section = conf.introspection
    if only is not None or not section.enabled or conf.discoverd.service_url:
        return None
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(section.host,
                                                                     section.host)
    host = f"[{host}]" if ":" in host else host
    return f"{'https' if section.cert_file else 'http'}://{host}:{section.port}/v1"


def _settle_heap() -> None:
    """Move what start-up made (modules, tables, compiled statements: ~150,000 objects)
    out of the collector's reach: they live as long as the process, yet every full
    collection walked them all, ~0.1 s each, several times a minute under load."""
    gc.collect()
    gc.freeze()


async def _serve(conf: configmod.Config, only: str | None) -> None:
    """Run the bare-metal service and discoverd (or one of them) in one event loop."""
    bm = di = None
    if only in (None, "baremetal"):
        from ironsight.baremetal.service import BaremetalService

        bm = BaremetalService(conf, local_discoverd_url=local_discoverd_url(conf, only))
    if only == "discoverd" or (only is None and conf.introspection.enabled):
        from ironsight.discoverd.service import DiscoverdService

        di = DiscoverdService(conf, baremetal_in_process(conf, bm))
    served = listeners(conf, only, bm, di)
    services = [svc for svc in (bm, di) if svc is not None]
    servers = [(_uvicorn(item, conf.DEFAULT.debug), item) for item in served]
    for svc in services:
        await svc.start()
    _settle_heap()
    loop = asyncio.get_running_loop()

    def stop() -> None:
        for server, _ in servers:
            server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    for _server, item in servers:
        LOG.info("%s listening on %s", item.name, item.url)
    try:
        results = await asyncio.gather(*(server.serve() for server, _ in servers),
                                       return_exceptions=True)
    finally:
        for svc in reversed(services):
            await svc.stop()
    for (server, item), result in zip(servers, results, strict=True):
        if isinstance(result, BaseException) or not server.started:
            raise click.ClickException(f"{item.name} could not listen on {item.host}:"
                                       f"{item.port} (is another service using it?)")


def upgrade_all(conf: configmod.Config, only: str | None = None) -> list[str]:
    """Create/upgrade the tables of the services that will run; returns what was done."""
    from ironsight.baremetal.db.models import VERSION_TABLE as BM_TABLE
    from ironsight.baremetal.service import upgrade_database as upgrade_bm
    from ironsight.common.db import current_revision
    from ironsight.discoverd.db.models import VERSION_TABLE as DI_TABLE
    from ironsight.discoverd.service import upgrade_database as upgrade_di

    done = []
    try:
        private_dir(conf.state_dir)
        if only in (None, "baremetal"):
            upgrade_bm(conf)
            done.append("bare-metal tables at revision "
                        f"{current_revision(conf.database_url, BM_TABLE)}")
        if only in (None, "discoverd"):
            upgrade_di(conf)
            done.append("discoverd tables at revision "
                        f"{current_revision(conf.discoverd_database_url, DI_TABLE)}")
    except Exception as exc:
        raise click.ClickException(f"database upgrade failed: {one_line(exc)}") from None
    return done


def one_line(exc: BaseException) -> str:
    """What an error says, in one line: a database driver's own text (SQLAlchemy adds the
    statement and a link on further lines)."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first


def register(cli: click.Group) -> None:
    @cli.command()
    @config_file_option
    @click.option("--only", type=click.Choice(["baremetal", "discoverd"]), default=None,
                  help="Run only one of the two services (default: both).")
    def serve(config_file: str | None, only: str | None) -> None:
        """Run the bare-metal service (API and conductor) and discoverd."""
        conf = _load(config_file)
        check_state_dir(conf.state_dir)
        logs.setup(conf.DEFAULT.debug, conf.DEFAULT.log_file)
        if only in (None, "baremetal"):
            _check_key_file(conf)
        upgrade_all(conf, only)
        LOG.info("State directory: %s", conf.state_dir)
        from sqlalchemy.exc import DBAPIError

        try:
            with contextlib.suppress(KeyboardInterrupt):
                run(_serve(conf, only))
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None
        except (OSError, DBAPIError, DatabaseUnavailable) as exc:
            # storage (read-only, full) or database trouble at start: one line, the
            # traceback only in the log at debug level
            LOG.debug("serve failed", exc_info=True)
            raise click.ClickException(f"cannot run: {one_line(exc)}") from None

    @cli.group()
    def db() -> None:
        """Database maintenance."""

    @db.command("upgrade")
    @config_file_option
    def db_upgrade(config_file: str | None) -> None:
        """Create or upgrade the database tables to the newest revision."""
        for line in upgrade_all(_load(config_file)):
            click.echo(line)

    @cli.group("config")
    def config_group() -> None:
        """Configuration helpers."""

    @config_group.command("sample")
    def config_sample() -> None:
        """Print every option with its default and help."""
        click.echo(configmod.sample())

    @config_group.command("check")
    @config_file_option
    def config_check(config_file: str | None) -> None:
        """Validate a configuration file and exit."""
        _load(config_file)
        click.echo("configuration is valid")

