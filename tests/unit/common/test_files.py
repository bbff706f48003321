"""Private state on disk: modes hold whatever the umask, and shared directories are left
alone."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ironsight.common.files import create_private, prepare_sqlite, private_dir


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_a_new_directory_and_its_missing_parents_are_0700(tmp_path: Path) -> None:
    private_dir(tmp_path / "a" / "b")
    assert mode(tmp_path / "a") == 0o700
    assert mode(tmp_path / "a" / "b") == 0o700


def test_an_existing_directory_open_to_others_is_tightened_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    state = tmp_path / "state"
    state.mkdir(0o755)
    private_dir(state)
    assert mode(state) == 0o700
    assert "was open to other users (mode 0755)" in caplog.text


def test_a_shared_sticky_directory_is_left_alone_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    private_dir(shared)
    assert mode(shared) == 0o1777
    assert "not ours to change" in caplog.text


def test_a_private_file_is_created_0600_even_over_a_readable_one(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_text("old")
    path.chmod(0o644)
    create_private(path, b"new")
    assert mode(path) == 0o600
    assert path.read_bytes() == b"new"


def test_an_exclusive_private_file_never_replaces_one(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_text("old")
    with pytest.raises(FileExistsError):
        create_private(path, b"new", exclusive=True)
    assert path.read_text() == "old"


def test_a_new_sqlite_database_and_its_wal_and_shm_are_0600(tmp_path: Path) -> None:
    path = tmp_path / "state" / "ironsight.sqlite"
    prepare_sqlite(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    try:
        assert mode(path.parent) == 0o700
        for name in ("ironsight.sqlite", "ironsight.sqlite-wal", "ironsight.sqlite-shm"):
            assert mode(path.parent / name) == 0o600, name
    finally:
        conn.close()


def test_an_existing_readable_sqlite_database_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "ironsight.sqlite"
    sqlite3.connect(path).close()
    path.chmod(0o644)
    prepare_sqlite(path)
    assert mode(path) == 0o600


def test_the_directory_of_a_configured_database_path_is_not_changed(tmp_path: Path) -> None:
    """Only the state directory is ours to tighten; a database placed elsewhere by the
    operator leaves that directory as it is."""
    tmp_path.chmod(0o755)
    prepare_sqlite(tmp_path / "elsewhere.sqlite")
    assert mode(tmp_path) == 0o755
