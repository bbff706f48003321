"""`keystone`: callers' tokens (`X-Auth-Token`) validated by a real Keystone, as
keystonemiddleware does for Ironic, with its option names (`[keystone_authtoken]`).

keystoneauth1 does the talking: the service user's password authentication and its renewal,
the identity endpoint found in the catalog, `GET /v3/auth/tokens` with `X-Subject-Token`. It
is synchronous, so every call to Keystone runs in a thread, never on the event loop. A valid
token is remembered (keyed by a SHA-256 of it, never the token itself) until its expiry or
`token_cache_time`, whichever comes first, so that a client's requests do not each cost a
round trip to Keystone; a refusal is never remembered.

Keystone's default roles are exactly ours (admin, member, reader; admin implies member implies
reader): the highest the token carries is the caller's role. A token scoped to the system or to
one of `allowed_projects` acts on the whole fleet; one scoped to any other project acts for that
project, by Ironic's project-scoped rules (baremetal/api/project_scope.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from keystoneauth1 import access, session
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1.identity import generic

from ironsight.common.auth.identity import ROLE_NAMES, Identity, Role
from ironsight.common.auth.middleware import Forbidden, OnceAtATime, Unavailable
from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError

LOG = logging.getLogger(__name__)
CACHE_SIZE = 10000  # remembered tokens at most (least recently used forgotten first)
MAX_TOKEN = 16384  # longer X-Auth-Token values are refused unasked (fernet tokens: ~200)


def service_session(conf: Config) -> session.Session:
    """A keystoneauth session authenticated as `[keystone_authtoken]`'s service user."""
    section = conf.keystone_authtoken
    missing = [name for name in ("auth_url", "username", "password")
               if not getattr(section, name)]
    if missing:
        raise ConfigError(f"auth_strategy = keystone needs [keystone_authtoken] "
                          f"{', '.join(missing)}")
    auth = generic.Password(auth_url=section.auth_url, username=section.username,
                            password=section.password, project_name=section.project_name,
                            user_domain_name=section.user_domain_name,
                            project_domain_name=section.project_domain_name)
    return session.Session(auth=auth, verify=section.cafile or True,
                           timeout=section.http_connect_timeout)


def unavailable(auth_url: str, exc: Exception) -> Unavailable:
    """Keystone could not answer (or refused the service user): the caller is not at fault."""
    if isinstance(exc, ks_exc.ConnectionError | ks_exc.DiscoveryFailure):
        why = f"cannot reach Keystone at {auth_url}"
    elif isinstance(exc, ks_exc.Unauthorized | ks_exc.Forbidden):
        why = "Keystone refuses this service's own credentials ([keystone_authtoken])"
    else:
        why = f"Keystone at {auth_url} failed"
    LOG.error("token validation: %s: %s", why, exc)
    return Unavailable(f"Authentication is unavailable: {why}. Try again later.")


class Keystone:
    """The callers' tokens, validated by Keystone as the service user."""

    name = "keystone"
    asks_for = "a Keystone token (X-Auth-Token)"

    def __init__(self, conf: Config, keystone: session.Session | None = None) -> None:
        section = conf.keystone_authtoken
        self.session = keystone or service_session(conf)
        self.auth_url = section.auth_url
        self.challenge = f'Keystone uri="{section.www_authenticate_uri or section.auth_url}"'
        # keystonemiddleware's answer to a request without a valid token, as Ironic's
        self.unauthorized_body: dict[str, Any] | None = {"error": {
            "code": 401, "title": "Unauthorized",
            "message": "The request you have made requires authentication."}}
        self.endpoint = {"service_type": "identity", "interface": section.interface,
                         "version": (3, 0)}
        self.cache_time = section.token_cache_time
        self.projects = frozenset(section.allowed_projects)
        self._known: OrderedDict[bytes, tuple[float, Identity]] = OrderedDict()
        self._checks = OnceAtATime()

    async def identify(self, headers: Mapping[str, str]) -> Identity | None:
        token = headers.get("x-auth-token")
        if not token or len(token) > MAX_TOKEN:
            return None
        key = hashlib.sha256(token.encode()).digest()
        known = self._known.get(key)
        if known is not None:
            if known[0] > time.monotonic():
                self._known.move_to_end(key)
                return known[1]
            del self._known[key]
        found = await self._checks.run(key, lambda: self._validate(token))
        if not isinstance(found, access.AccessInfo):
            return None
        identity = self._identity(found)
        self._remember(key, identity, found.expires)
        return identity

    def _validate(self, token: str) -> access.AccessInfo | None:
        """Keystone's record of the token; None when it is not a valid token (blocking)."""
        try:
            resp = self.session.get("/auth/tokens", endpoint_filter=self.endpoint,
                                    headers={"X-Subject-Token": token}, authenticated=True,
                                    raise_exc=False)
        except ks_exc.ClientException as exc:
            raise unavailable(self.auth_url, exc) from None
        if resp.status_code in (401, 403) or resp.status_code >= 500:
            raise unavailable(self.auth_url, ks_exc.from_response(resp, "GET", "/auth/tokens"))
        if resp.status_code != 200:  # 404: unknown, expired or revoked
            return None
        try:
            return access.create(body=resp.json(), auth_token=token)
        except (ValueError, KeyError, TypeError):
            raise unavailable(self.auth_url, ValueError("an unreadable answer")) from None

    def _identity(self, found: access.AccessInfo) -> Identity:
        user = found.username or found.user_id or "?"
        names = {name.lower() for name in found.role_names or ()}
        roles = [Role.named(name) for name in ROLE_NAMES if name in names]
        if not roles:
            raise Forbidden(f"User {user!r} has none of the roles "
                            f"{', '.join(reversed(ROLE_NAMES))}.")
        if found.system_scoped or ({found.project_name, found.project_id} & self.projects):
            return Identity(user, max(roles))
        if not found.project_id:
            raise Forbidden(f"User {user!r}'s token is scoped to no project; use a token "
                            "scoped to a project or to the system.")
        # Ironic's project scope: the project's own nodes (owner or lessee) only
        return Identity(user, max(roles), found.project_id)

    def _remember(self, key: bytes, identity: Identity, expires: dt.datetime | None) -> None:
        ttl = float(self.cache_time)
        if expires is not None:
            ttl = min(ttl, (expires - dt.datetime.now(dt.UTC)).total_seconds())
        if ttl <= 0:
            return
        self._known[key] = (time.monotonic() + ttl, identity)
        if len(self._known) > CACHE_SIZE:
            self._known.popitem(last=False)
