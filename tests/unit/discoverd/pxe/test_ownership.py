"""One owner per provisioning network: on SQLite (one host), an exclusive file lock. The
PostgreSQL advisory lock is tested against a real server in tests/functional/pxe/."""

from __future__ import annotations

from pathlib import Path

from ironsight.discoverd.pxe.ownership import FileOwnership, lock_key, ownership_for


def test_each_network_has_its_own_lock() -> None:
    assert lock_key("prov-a") == lock_key("prov-a") != lock_key("prov-b")
    assert -2**63 <= lock_key("prov-a") < 2**63


async def test_a_file_lock_has_one_owner_until_released(tmp_path: Path) -> None:
    first, second = FileOwnership(tmp_path / "pxe.lock"), FileOwnership(tmp_path / "pxe.lock")
    assert await first.try_acquire()
    assert not await second.try_acquire()
    assert await first.still_held()
    await first.release()
    assert await second.try_acquire()
    await second.release()


def test_sqlite_elects_with_a_file_next_to_the_database(tmp_path: Path) -> None:
    found = ownership_for(f"sqlite:///{tmp_path / 'db' / 'discoverd.sqlite'}", "prov/1",
                          tmp_path)
    assert isinstance(found, FileOwnership)
    assert found.path == tmp_path / "db" / "pxe-prov_1.lock"
