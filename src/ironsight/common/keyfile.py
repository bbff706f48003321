"""Fernet key files: the keys that encrypt secrets at rest, one per line, newest first.

The first key encrypts; every key listed decrypts (MultiFernet), so a rotation adds a key
in front, re-encrypts, then drops the old ones, and values stay readable at every step. A
running service notices when the file changes (a rotation made by `ironsight secrets
rotate-key` while it runs) and reads it again: each use checks the file's inode, size and
modification time first (one stat, a few microseconds beside Fernet's tens).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from ironsight.common.exceptions import ConfigError
from ironsight.common.files import create_private

LOG = logging.getLogger(__name__)


def new_key() -> bytes:
    return Fernet.generate_key()


def read_keys(path: Path) -> list[bytes]:
    """The keys of the file, newest first; a ConfigError names the file and the line at
    fault, never its content."""
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise ConfigError(f"secrets key file {path} does not exist (create one with "
                          "`ironsight secrets create-key --key-file PATH`)") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not a key file (not ASCII)"
        raise ConfigError(f"secrets key file {path} cannot be read: {why}") from None
    keys: list[bytes] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            Fernet(line.encode())
        except ValueError:
            raise ConfigError(f"secrets key file {path}: line {number} is not a Fernet key "
                              "(32 url-safe base64-encoded bytes)") from None
        keys.append(line.encode())
    if not keys:
        raise ConfigError(f"secrets key file {path} holds no key")
    return keys


def write_keys(path: Path, keys: list[bytes]) -> None:
    """Replace the file's keys atomically (a reader sees the old file or the new one), the
    new file 0600."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    create_private(tmp, b"".join(key + b"\n" for key in keys), exclusive=True)
    os.replace(tmp, path)


def create_key_file(path: Path) -> None:
    """A new key file with one fresh key, 0600; an existing file is never replaced."""
    try:
        create_private(path, new_key() + b"\n", exclusive=True)
    except FileExistsError:
        raise ConfigError(f"{path} exists already: not replaced (to change keys, use "
                          "`ironsight secrets rotate-key`)") from None


class KeyFile:
    """The keys of one file, read again when the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int, int] | None = None
        self._keys: list[bytes] = []
        self._fernet: MultiFernet | None = None
        self._broken = False
        self._load()
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            LOG.warning("Secrets key file %s is readable by other users (mode %04o): "
                        "chmod 600 it", path, mode)

    @property
    def keys(self) -> list[bytes]:
        return list(self._keys)

    def _stat(self) -> tuple[int, int, int]:
        info = self.path.stat()
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def _load(self) -> None:
        keys = read_keys(self.path)
        stamp = self._stat()
        self._keys, self._stamp = keys, stamp
        self._fernet = MultiFernet([Fernet(key) for key in keys])

    def refresh(self) -> bool:
        """Read the file again if it changed; whether it did. A file that became unreadable
        leaves the keys in use as they are (said once in the log until it is readable)."""
        try:
            if self._stat() == self._stamp:
                return False
            self._load()
        except (OSError, ConfigError) as exc:
            if not self._broken:
                LOG.error("Secrets key file %s could not be read again; the keys read "
                          "before stay in use: %s", self.path, exc)
            self._broken = True
            return False
        self._broken = False
        LOG.info("Secrets key file %s read again (%d keys)", self.path, len(self._keys))
        return True

    def encrypt(self, data: bytes) -> bytes:
        self.refresh()
        assert self._fernet is not None
        return self._fernet.encrypt(data)

    def decrypt(self, token: bytes) -> bytes:
        """The plain bytes; InvalidToken when no key of the file opens the token."""
        self.refresh()  # a stat: a key removed from the file no longer opens anything
        assert self._fernet is not None
        return self._fernet.decrypt(token)

    def is_primary(self, token: bytes) -> bool:
        """Whether the newest key alone opens `token` (a rotation has nothing to do)."""
        try:
            Fernet(self._keys[0]).decrypt(token)
        except InvalidToken:
            return False
        return True
