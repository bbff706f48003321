"""Private state on disk: directories 0700, files 0600, whatever the process's umask.

The state directory holds the databases (BMC and SSH credentials in driver_info), ramdisk
logs and key files: nobody but the service's user may read them. Modes are set explicitly
(chmod after mkdir, mode at open), as the umask (often 022) would otherwise make them
readable by every user of the host.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

LOG = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
# SQLite's companions of a database file (it creates them with the main file's mode).
SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def private_dir(path: Path, *, tighten: bool = True) -> Path:
    """Create `path` (and missing parents) 0700. With `tighten`, an existing one that others
    may enter is made 0700, with a warning (it may have held state unprotected), when it is
    ours and not a shared directory (sticky, as /tmp)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for new in reversed(missing):
        try:
            new.mkdir(DIR_MODE)
        except FileExistsError:
            continue  # created meanwhile (another process): not ours to chmod
        new.chmod(DIR_MODE)  # the umask does not apply to chmod
    if tighten and path not in missing:
        _tighten_dir(path)
    return path


def private_file(path: Path) -> None:
    """Make an existing file 0600 (a missing one is left missing)."""
    if path.exists():
        _tighten_file(path)


def create_private(path: Path, data: bytes, *, exclusive: bool = False) -> None:
    """Write `data` to `path`, created 0600 (never readable by others, even for a moment);
    with `exclusive`, refuse (FileExistsError) to replace an existing file."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # an existing file keeps its mode at open
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def prepare_sqlite(path: Path) -> None:
    """Before SQLite opens `path`: a missing directory created private, the database file
    created 0600 if missing (SQLite would create it 0644 under the usual umask, and its
    -wal and -shm with the same mode), and existing files of it tightened to 0600."""
    private_dir(path.parent, tighten=False)  # a directory the operator chose: theirs
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)  # empty: a valid database
        os.fchmod(fd, FILE_MODE)
        os.close(fd)
    for suffix in SQLITE_SUFFIXES:
        private_file(path.with_name(path.name + suffix))


def _tighten_dir(path: Path) -> None:
    info = path.stat()
    current = stat.S_IMODE(info.st_mode)
    if current & 0o077 == 0:
        return
    if info.st_uid != os.geteuid() or current & stat.S_ISVTX:
        LOG.warning("State directory %s is open to other users (mode %04o) and not ours to "
                    "change: keep it private (chmod 700)", path, current)
        return
    path.chmod(current & ~0o077 | DIR_MODE)
    LOG.warning("State directory %s was open to other users (mode %04o); now %04o", path,
                current, current & ~0o077 | DIR_MODE)


def _tighten_file(path: Path) -> None:
    try:
        current = stat.S_IMODE(path.stat().st_mode)
        if current & 0o077:
            path.chmod(current & ~0o077)
    except OSError as exc:  # not ours: say so, do not fail
        LOG.warning("Cannot make %s private: %s", path, exc.strerror)
