"""`http_basic`: users from an Apache htpasswd file of bcrypt entries (`htpasswd -B`), as
Ironic's and ironic-inspector's `http_basic_auth_user_file`.

bcrypt is slow on purpose (~50-250 ms a check at the usual costs), which would put that on
every request; a successful check is therefore remembered, keyed by a SHA-256 of the exact
credentials, until the file changes (its mtime, size or inode; looked at once a second). A
wrong password is never remembered, so every guess costs the guesser a full bcrypt round.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import bcrypt

from ironsight.common.exceptions import ConfigError

CACHE_SIZE = 4096  # remembered credentials at most (oldest forgotten first)
STAT_EVERY = 1.0  # seconds between looks at the file


@dataclass(frozen=True)
class _Stamp:
    mtime_ns: int
    size: int
    inode: int


def _stamp(path: Path) -> _Stamp:
    st = path.stat()
    return _Stamp(st.st_mtime_ns, st.st_size, st.st_ino)


def parse(text: str, where: str) -> dict[str, bytes]:
    """user -> bcrypt hash; anything but bcrypt entries is refused (Ironic's rule too)."""
    users: dict[str, bytes] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, hashed = line.partition(":")
        if not sep or not user:
            raise ConfigError(f"{where} line {number}: expected USER:HASH")
        if not hashed.startswith(("$2y$", "$2b$", "$2a$")):
            raise ConfigError(f"{where} line {number}: the entry of user {user!r} is not "
                              "bcrypt (create it with `htpasswd -B`)")
        users[user] = hashed.encode()
    return users


class UserFile:
    """The users of an htpasswd file, re-read when it changes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._users: dict[str, bytes] = {}
        self._stamp: _Stamp | None = None
        self._looked = 0.0
        self._verified: OrderedDict[bytes, str] = OrderedDict()
        self._decoy_hash: bytes | None = None
        self._load()

    def _load(self) -> None:
        try:
            stamp = _stamp(self.path)
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read http_basic_auth_user_file {self.path}: "
                              f"{exc.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"http_basic_auth_user_file {self.path} is not UTF-8") from None
        self._users = parse(text, str(self.path))
        self._stamp = stamp
        self._verified.clear()
        self._decoy_hash = None

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._looked < STAT_EVERY:
            return
        self._looked = now
        try:
            changed = _stamp(self.path) != self._stamp
        except OSError:
            changed = True
        if changed:
            try:
                self._load()
            except ConfigError:
                # A file mid-rewrite or removed: nobody gets in until it is readable again.
                self._users, self._stamp = {}, None
                self._verified.clear()

    def remembered(self, user: str, password: str) -> bool:
        """Whether these credentials passed a check since the file last changed (cheap)."""
        self._refresh()
        key = _key(user, password)
        if self._verified.get(key) == user:
            self._verified.move_to_end(key)
            return True
        return False

    def check(self, user: str, password: str) -> bool:
        """The full bcrypt check (slow: call it off the event loop). An unknown user costs
        the same as a wrong password, so that timing does not tell which users exist."""
        if self.remembered(user, password):
            return True
        hashed = self._users.get(user)
        try:
            ok = bcrypt.checkpw(password.encode(errors="surrogatepass"),
                                hashed or self._decoy())
        except ValueError:  # a malformed hash, or a password past bcrypt's 72 bytes
            return False
        if ok and hashed is not None:
            key = _key(user, password)
            self._verified[key] = user
            if len(self._verified) > CACHE_SIZE:
                self._verified.popitem(last=False)
        return ok and hashed is not None

    def _decoy(self) -> bytes:
        """A hash of the file's own cost to check unknown users against."""
        if self._decoy_hash is None:
            rounds = 12
            for hashed in self._users.values():
                with contextlib.suppress(ValueError, IndexError):
                    rounds = int(hashed.split(b"$")[2])
                break
            self._decoy_hash = bcrypt.hashpw(b"decoy", bcrypt.gensalt(rounds=rounds))
        return self._decoy_hash


def _key(user: str, password: str) -> bytes:
    return hashlib.sha256(f"{user}\0{password}".encode(errors="surrogatepass")).digest()
