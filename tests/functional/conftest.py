"""Fixtures that run real service processes."""

from __future__ import annotations

import configparser
import os
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import MetaData, create_engine, text

PG_URL = os.environ.get("IRONSIGHT_TEST_PG_URL", "")


_HANDED_OUT: set[int] = set()  # this test process's ports so far: never twice


def free_tcp_port() -> int:
    """A free loopback port not handed out before in this process: two picked one after
    the other (a service's two listeners) were once the same, and the second bind failed."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


class ServiceProcess:
    """`ironsight serve` in its own process, on a free port and a fresh state directory."""

    def __init__(self, state_dir: Path, extra_conf: str = "") -> None:
        self.state_dir = state_dir
        self.port = free_tcp_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.di_port = free_tcp_port()
        self.di_url = f"http://127.0.0.1:{self.di_port}"
        parser = configparser.ConfigParser(default_section="\x00none", interpolation=None)
        parser.read_dict({"DEFAULT": {"state_dir": str(state_dir)},
                          "api": {"port": str(self.port)},
                          "introspection": {"port": str(self.di_port),
                                            "ironic_url": self.url}})
        parser.read_string(extra_conf)  # later values win, sections merge
        self.conf = state_dir / "ironsight.conf"
        with open(self.conf, "w") as fh:
            parser.write(fh)
        self.log = state_dir / "service.log"
        self.proc: subprocess.Popen[bytes] | None = None
        # what clients of this service need: its CA (HTTPS) and a user (http_basic)
        self.verify: Any = True
        self.auth: tuple[str, str] | None = None
        self.ramdisk_url = ""  # a listener of the ramdisk endpoints only, when configured

    def configure(self, **sections: dict[str, str]) -> ServiceProcess:
        """Set options (later values win) before the service (re)starts."""
        parser = configparser.ConfigParser(default_section="\x00none", interpolation=None)
        parser.read(self.conf)
        parser.read_dict(sections)
        with open(self.conf, "w") as fh:
            parser.write(fh)
        return self

    def use_https(self, ca_file: Path) -> ServiceProcess:
        """Reach both APIs (and let discoverd reach the bare-metal one) over HTTPS, checking
        their certificate against `ca_file` (the services' [api]/[introspection] cert_file
        must be configured too)."""
        self.url = self.url.replace("http:", "https:")
        self.di_url = self.di_url.replace("http:", "https:")
        self.verify = ssl.create_default_context(cafile=str(ca_file))
        return self.configure(introspection={"ironic_url": self.url})

    def start(self, timeout: float = 30) -> ServiceProcess:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ironsight.cli", "serve", "--config-file", str(self.conf)],
                stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ironsight serve exited:\n{self.log.read_text()}")
            try:
                httpx.get(f"{self.url}/v1", timeout=1, verify=self.verify)
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"ironsight serve did not answer:\n{self.log.read_text()}")

    def stop(self) -> None:
        stop_process(self.proc)


def stop_process(proc: subprocess.Popen[bytes] | None) -> None:
    """Terminate a child that still runs, killing it after 10 s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session (dropped at the end)."""
    if not PG_URL:
        pytest.skip("IRONSIGHT_TEST_PG_URL is not set (make test sets it)")
    url = fresh_pg_database(f"ironsight_test_{uuid.uuid4().hex[:8]}")
    yield url
    drop_pg_database(url)


def fresh_pg_database(name: str) -> str:
    """Create an empty database next to the test server's and return its URL."""
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return PG_URL.rsplit("/", 1)[0] + "/" + name


def pg_database_with(prefix: str, metadata: MetaData) -> str:
    """A fresh database (named `prefix` and a random suffix) holding `metadata`'s tables; its
    URL. Skips the test where no PostgreSQL server is configured."""
    if not PG_URL:
        pytest.skip("IRONSIGHT_TEST_PG_URL is not set (make test sets it)")
    url = fresh_pg_database(f"{prefix}_{uuid.uuid4().hex[:8]}")
    engine = create_engine(url)
    metadata.create_all(engine)
    engine.dispose()
    return url


def drop_pg_database(url: str) -> None:
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="module")
def baremetal_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """One service per test module (a start takes ~2 s): tests make uniquely named nodes."""
    svc = ServiceProcess(tmp_path_factory.mktemp("baremetal")).start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture(scope="module")
def baremetal_url(baremetal_service: ServiceProcess) -> str:
    return baremetal_service.url


@pytest.fixture(scope="session")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real Keystone with the users of tests/functional/keystone.py, for the whole session
    (set up and started in ~4 s). Skips where its venv is missing."""
    from .keystone import Keystone, missing_reason

    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    server = Keystone(tmp_path_factory.mktemp("keystone")).start()
    try:
        server.create_users()
        yield server
    finally:
        server.stop()
