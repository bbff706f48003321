"""The PXE side without a single point of failure: two discoverd replicas serve one
provisioning network from one PostgreSQL, inside the network's namespace (real dnsmasq, a
real DHCP client). One owns the network; kill -9 it, and the other takes over within the
bound: a new node still gets a lease, from the new owner, and a MAC the bare-metal service
knows (a port not under introspection) is still refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import PG_URL, drop_pg_database, fresh_pg_database
from .conftest import SERVER_IF, PxeNet
from .test_pxe_serve import ENROL

UNKNOWN = ("52:54:00:5f:01:01", "52:54:00:5f:01:02")
ENROLLED = "52:54:00:5f:01:09"
TAKEOVER_BOUND = 10.0  # seconds, kill -9 to the new owner's dnsmasq running

pytestmark = pytest.mark.skipif(not PG_URL, reason="IRONSIGHT_TEST_PG_URL is not set")


def socket_url(url: str) -> str:
    """The same database through PostgreSQL's Unix socket: a socket is a file, so processes
    in another network namespace reach it (127.0.0.1 there is another loopback)."""
    port = url.rsplit(":", 1)[1].split("/")[0]
    directory = next(d for d in ("/var/run/postgresql", "/tmp")
                     if Path(d, f".s.PGSQL.{port}").exists())
    user, database = url.split("//", 1)[1].split("@")[0], url.rsplit("/", 1)[1]
    return f"postgresql+psycopg://{user}@/{database}?host={directory}&port={port}"


class Replica:
    def __init__(self, net: PxeNet, directory: Path, conf: str, only: str,
                 port: int = 0) -> None:
        self.directory, self.port = directory, port
        directory.mkdir()
        self.log = directory / "serve.log"
        (directory / "ironsight.conf").write_text(f"[DEFAULT]\nstate_dir = {directory}\n"
                                                  + conf)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [*net.prefix, sys.executable, "-m", "ironsight.cli", "serve", "--only", only,
                 "--config-file", str(directory / "ironsight.conf")],
                stdout=out, stderr=subprocess.STDOUT)

    def said(self, text: str) -> bool:
        return text in self.log.read_text(errors="replace")

    def refuses(self, mac: str) -> bool:
        """Whether its filter has refused `mac` to its dnsmasq (the hosts dir driver)."""
        path = self.directory / "pxe" / "hosts" / mac
        return path.exists() and path.read_text() == f"{mac},ignore\n"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def until(condition, timeout: float, what: str) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"{what} within {timeout} s"
        time.sleep(0.1)
    return time.monotonic() - started


@pytest.fixture
def database() -> Iterator[str]:
    url = fresh_pg_database(f"ironsight_pxe_{uuid.uuid4().hex[:8]}")
    yield url
    drop_pg_database(url)


async def test_killing_the_pxe_owner_hands_the_network_to_the_standby(
        pxe_net: PxeNet, tmp_path: Path, database: str) -> None:
    started: list[Replica] = []
    pxe = f"""
[pxe]
enabled = true
interface = {SERVER_IF}
network = prov-test
dhcp_range = {pxe_net.subnet}.100,{pxe_net.subnet}.199,255.255.255.0,10m
http_url = http://{pxe_net.subnet}.1:5050
takeover_interval = 0.5
[pxe_filter]
sync_period = 1
"""
    try:
        bm = Replica(pxe_net, tmp_path / "bm", "[api]\nport = 6385\n", "baremetal")
        started.append(bm)
        for name, port in (("a", 5050), ("b", 5051)):
            started.append(Replica(pxe_net, tmp_path / name, (
                # (in [DEFAULT]) the test's own network namespace: no other host reaches it
                "allow_remote_noauth = true\n"
                f"[introspection]\nhost = 0.0.0.0\nport = {port}\n"
                f"connection = {socket_url(database)}\nheartbeat_interval = 0.5\n"
                "heartbeat_timeout = 3\n") + pxe, "discoverd", port))
        subprocess.run([*pxe_net.prefix, sys.executable, "-c",
                        ENROL.format(port=6385, mac=ENROLLED)], check=True, timeout=30)
        replicas = started[1:]
        until(lambda: any(r.said("dnsmasq started") for r in replicas), 20,
              "one replica serves the network")
        owner = next(r for r in replicas if r.said("dnsmasq started"))
        standby = next(r for r in replicas if r is not owner)
        until(lambda: standby.said("another replica serves network prov-test; standing by"),
              20, "the other replica stands by")
        until(lambda: owner.refuses(ENROLLED), 10, "the owner's filter refuses the port")
        assert (await pxe_net.dhcp(UNKNOWN[0]) or "").startswith(pxe_net.subnet)
        assert await pxe_net.dhcp(ENROLLED, tries=2) is None

        os.kill(owner.proc.pid, signal.SIGKILL)
        owner.proc.wait()
        took = until(lambda: standby.said("dnsmasq started"), TAKEOVER_BOUND,
                     "the standby runs dnsmasq")
        assert standby.said("PXE: taking over network prov-test")
        assert standby.refuses(ENROLLED)  # its dnsmasq starts only after the filter's sync
        address = await pxe_net.dhcp(UNKNOWN[1])
        assert (address or "").startswith(pxe_net.subnet), standby.log.read_text()
        assert await pxe_net.dhcp(ENROLLED, tries=2) is None
        assert took < TAKEOVER_BOUND

        members = subprocess.run(
            [*pxe_net.prefix, sys.executable, "-m", "ironsight.cli", "introspection",
             "members", "--url", f"http://127.0.0.1:{standby.port}", "-f", "json"],
            capture_output=True, text=True, timeout=30, check=True).stdout
        assert '"network": "prov-test"' in members
        metrics = subprocess.run(
            [*pxe_net.prefix, "busybox", "wget", "-q", "-O", "-",
             f"http://127.0.0.1:{standby.port}/metrics"],
            capture_output=True, text=True, timeout=30, check=True).stdout
        assert 'ironsight_pxe_owner{network="prov-test"} 1.0' in metrics
    finally:
        for replica in started:
            replica.stop()
    until(lambda: not running_in(pxe_net.server), 5, "nothing left in the namespace")


def running_in(namespace: str) -> list[str]:
    """Processes alive in the namespace (a killed child this sandbox's init has not reaped
    yet is a zombie: not running)."""
    pids = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True,
                          timeout=10).stdout.split()
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(pid)
    return alive
