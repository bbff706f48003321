"""Console sessions: a signed cookie, so that any replica sharing the key accepts it.

The cookie holds who logged in (user, role, project), when the session ends and the CSRF
token its forms carry; an HMAC-SHA256 over it with the session key makes it unforgeable. No
password or token is kept in it: the login checks the credentials once, through the
configured `auth_strategy`, and the cookie then stands for the identity it found.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ironsight.common.auth.identity import Identity, Role
from ironsight.common.exceptions import ConfigError
from ironsight.common.files import create_private

LOG = logging.getLogger(__name__)
COOKIE = "ironsight_session"
KEY_BYTES = 32
MAX_COOKIE = 4096


@dataclass(frozen=True)
class Session:
    user: str | None
    role: Role
    project: str | None
    expires: float  # time.time()
    csrf: str

    @property
    def sid(self) -> str:
        """The session's name where its end is recorded (a logout): the hash of its CSRF
        token, which is random per session and never stored itself."""
        return hashlib.sha256(self.csrf.encode()).hexdigest()

    @property
    def identity(self) -> Identity:
        return Identity(self.user, self.role, self.project)

    @property
    def can_act(self) -> bool:
        """Whether the console shows this user its buttons (the API decides anyway)."""
        return self.role >= Role.MEMBER


class Revocations(Protocol):
    """Sessions ended by a logout before their cookie's end (baremetal/db/console_sessions.py:
    in the service's database, so that every replica knows)."""

    async def revoke(self, session: str, expires: float) -> None: ...

    async def revoked(self, session: str) -> bool: ...


def load_key(path: Path) -> bytes:
    """The signing key of `path`, made (random, mode 0600) when the file does not exist."""
    try:
        raw = path.read_bytes().strip()
    except FileNotFoundError:
        raw = base64.b64encode(secrets.token_bytes(KEY_BYTES))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            create_private(path, raw + b"\n", exclusive=True)
        except FileExistsError:  # another replica made it first: theirs wins
            raw = path.read_bytes().strip()
        except OSError as exc:
            raise ConfigError(f"[console] session_key_file {path} cannot be created: "
                              f"{exc.strerror}") from None
        LOG.info("Created the console's session key %s", path)
    except OSError as exc:
        raise ConfigError(f"[console] session_key_file {path} cannot be read: "
                          f"{exc.strerror}") from None
    try:
        key = base64.b64decode(raw, validate=True)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise ConfigError(f"[console] session_key_file {path} does not hold a key (base64 "
                          f"of {KEY_BYTES} random bytes; delete it to have one made)")
    return key


class Sessions:
    """Makes and reads session cookies signed with one key."""

    def __init__(self, key: bytes, lifetime: int) -> None:
        self._key = key
        self.lifetime = lifetime

    def new(self, identity: Identity, now: float | None = None) -> Session:
        return Session(identity.user, identity.role, identity.project,
                       float(int((now or time.time()) + self.lifetime)),
                       secrets.token_urlsafe(24))

    def encode(self, session: Session) -> str:
        payload = json.dumps([session.user, session.role.name.lower(), session.project,
                              int(session.expires), session.csrf],
                             separators=(",", ":")).encode()
        body = base64.urlsafe_b64encode(payload).rstrip(b"=")
        return (body + b"." + self._sign(body)).decode("ascii")

    def decode(self, cookie: str | None, now: float | None = None) -> Session | None:
        """The cookie's session; None when absent, forged, damaged or expired."""
        if not cookie or len(cookie) > MAX_COOKIE:
            return None
        body, _, signature = cookie.encode("ascii", "replace").partition(b".")
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        try:
            user, role, project, expires, csrf = json.loads(
                base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4)))
            session = Session(user, Role.named(role), project, float(expires), str(csrf))
        except (ValueError, TypeError, KeyError):
            return None
        return session if session.expires > (now or time.time()) else None

    def _sign(self, body: bytes) -> bytes:
        digest = hmac.new(self._key, body, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=")


def session_key_path(configured: str, state_dir: Path) -> Path:
    return Path(configured).expanduser() if configured else state_dir / "console-session.key"


def check_csrf(session: Session, token: str | None) -> bool:
    return bool(token) and hmac.compare_digest(session.csrf.encode(), (token or "").encode())
