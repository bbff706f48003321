"""The service commands as an operator runs them: serve, db upgrade, config sample/check."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .conftest import PG_URL, ServiceProcess, drop_pg_database, fresh_pg_database


def ironsight(*args: str, env: dict[str, str] | None = None,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ironsight.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_serve_refuses_an_unknown_option_naming_it(tmp_path: Path) -> None:
    conf = tmp_path / "bad.conf"
    conf.write_text("[api]\nprot = 6385\n")
    proc = ironsight("serve", "--config-file", str(conf))
    assert proc.returncode != 0
    assert "[api] prot: unknown option" in proc.stderr


def test_serve_refuses_a_bad_value_naming_it(tmp_path: Path) -> None:
    conf = tmp_path / "bad.conf"
    conf.write_text("[conductor]\nworkers_pool_size = many\n")
    proc = ironsight("serve", "--config-file", str(conf))
    assert proc.returncode != 0
    assert "[conductor] workers_pool_size: bad value 'many'" in proc.stderr


def test_config_sample_lists_every_section() -> None:
    out = ironsight("config", "sample").stdout
    for section in ("[DEFAULT]", "[api]", "[database]", "[conductor]", "[discoverd]", "[ipmi]",
                    "[ssh]"):
        assert section in out


def test_config_check_accepts_the_sample(tmp_path: Path) -> None:
    conf = tmp_path / "sample.conf"
    conf.write_text(ironsight("config", "sample").stdout)
    proc = ironsight("config", "check", "--config-file", str(conf))
    assert proc.returncode == 0, proc.stderr


def test_db_upgrade_on_sqlite_is_idempotent(tmp_path: Path) -> None:
    env = {"IRONSIGHT_STATE_DIR": str(tmp_path)}
    for _ in range(2):
        proc = ironsight("db", "upgrade", env=env)
        assert proc.returncode == 0, proc.stderr
        assert "bare-metal tables at revision 0012" in proc.stdout
    assert (tmp_path / "ironsight.sqlite").exists()


@pytest.mark.skipif(not PG_URL, reason="IRONSIGHT_TEST_PG_URL is not set")
def test_db_upgrade_on_postgresql(tmp_path: Path) -> None:
    url = fresh_pg_database(f"ironsight_upgrade_{os.getpid()}")
    try:
        conf = tmp_path / "pg.conf"
        conf.write_text(f"[database]\nconnection = {url}\n")
        proc = ironsight("db", "upgrade", "--config-file", str(conf))
        assert proc.returncode == 0, proc.stderr
        assert "bare-metal tables at revision 0012" in proc.stdout
    finally:
        drop_pg_database(url)


@pytest.mark.skipif(not PG_URL, reason="IRONSIGHT_TEST_PG_URL is not set")
def test_replicas_upgrading_one_new_database_at_once_all_succeed(tmp_path: Path) -> None:
    """Replicas rolled out together migrate one after the other (an advisory lock), instead
    of racing to create the same tables."""
    url = fresh_pg_database(f"ironsight_upgrade_race_{os.getpid()}")
    try:
        conf = tmp_path / "pg.conf"
        conf.write_text(f"[database]\nconnection = {url}\n[introspection]\nconnection = {url}\n")
        procs = [subprocess.Popen([sys.executable, "-m", "ironsight.cli", "db", "upgrade",
                                   "--config-file", str(conf)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
        results = [(proc.wait(60), *proc.communicate()) for proc in procs]
        assert [code for code, _out, _err in results] == [0] * 4, results
        assert all("discoverd tables at revision 0010" in out for _code, out, _err in results)
    finally:
        drop_pg_database(url)


def test_db_upgrade_with_unreachable_database_is_a_clear_error(tmp_path: Path) -> None:
    conf = tmp_path / "pg.conf"
    conf.write_text("[database]\nconnection = postgresql+psycopg://nobody@127.0.0.1:1/none\n")
    proc = ironsight("db", "upgrade", "--config-file", str(conf))
    assert proc.returncode != 0
    assert "database upgrade failed" in proc.stderr


def _port_busy(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.skipif(_port_busy(6385) or _port_busy(5050),
                    reason="something already listens on 127.0.0.1:6385 or :5050")
def test_serve_without_config_uses_embedded_defaults(tmp_path: Path) -> None:
    env = {**os.environ, "IRONSIGHT_STATE_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "ironsight.cli", "serve"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                doc = httpx.get("http://127.0.0.1:6385/", timeout=1).json()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "service did not start on :6385"
                time.sleep(0.1)
        assert doc["default_version"]["version"] == "1.115"
        assert httpx.get("http://127.0.0.1:5050/", timeout=5).json()["versions"][0]["id"] == "1.18"
        assert (tmp_path / "ironsight.sqlite").exists()
        assert (tmp_path / "discoverd.sqlite").exists()
    finally:
        proc.terminate()
        assert proc.wait(15) == 0


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_db_upgrade_under_umask_022_makes_state_private(tmp_path: Path) -> None:
    """The databases hold BMC credentials: the state directory is 0700 and each database
    0600, though the usual umask would make them readable by every user of the host."""
    state = tmp_path / "state"
    old = os.umask(0o022)
    try:
        proc = ironsight("db", "upgrade", env={"IRONSIGHT_STATE_DIR": str(state)})
    finally:
        os.umask(old)
    assert proc.returncode == 0, proc.stderr
    assert _mode(state) == 0o700
    assert _mode(state / "ironsight.sqlite") == 0o600
    assert _mode(state / "discoverd.sqlite") == 0o600


def test_a_running_service_keeps_its_databases_and_their_wal_0600(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(0o755)
    state.chmod(0o755)  # as an operator's mkdir left it: tightened at start
    old = os.umask(0o022)
    try:
        svc = ServiceProcess(state).start()
    finally:
        os.umask(old)
    try:
        resp = httpx.post(f"{svc.url}/v1/nodes", json={"driver": "fake", "name": "modes"},
                          headers={"X-OpenStack-Ironic-API-Version": "1.115"}, timeout=10)
        assert resp.status_code == 201, resp.text
        assert _mode(state) == 0o700
        files = sorted(p.name for p in state.glob("*.sqlite*"))
        assert "ironsight.sqlite-wal" in files and "ironsight.sqlite-shm" in files
        for name in files:
            assert _mode(state / name) == 0o600, name
        assert "was open to other users (mode 0755)" in svc.log.read_text()
    finally:
        svc.stop()
