"""The service user's Keystone token, for the calls the services make to each other (the
conductor to discoverd, discoverd to the bare-metal API) under auth_strategy = keystone.

Clients ask for it on every request: that returns the same header mapping, without a
thread or an allocation, until the token is due for renewal (a minute before it expires, or
halfway through a shorter life); only then is Keystone asked again, in a thread. A peer that
answers 401 (a revoked token) makes the client call `invalidate()` and ask once more.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ironsight.common.config import Config
from ironsight.common.exceptions import IronsightError

if TYPE_CHECKING:  # keystoneauth1 is imported only where keystone is configured
    from keystoneauth1 import session

RENEW_BEFORE = 60.0  # seconds before expiry a token is renewed


class TokenUnavailable(IronsightError):
    """No token could be obtained from Keystone."""

    code = 503


class ServiceToken:
    """A `TokenSource` (`ironsight.common.auth.credentials`) of the service user's tokens."""

    def __init__(self, keystone: session.Session, auth_url: str) -> None:
        self.session = keystone
        self.auth_url = auth_url
        self._headers: Mapping[str, str] = {}
        self._renew_at = 0.0
        self._stale = False
        self._lock = asyncio.Lock()

    async def headers(self) -> Mapping[str, str]:
        if time.monotonic() < self._renew_at:
            return self._headers
        async with self._lock:
            if time.monotonic() >= self._renew_at:
                token, expires = await asyncio.to_thread(self._fetch)
                left = (expires - dt.datetime.now(dt.UTC)).total_seconds() if expires else 3600
                ahead = RENEW_BEFORE if left > 2 * RENEW_BEFORE else left / 2
                self._headers = {"X-Auth-Token": token}
                self._renew_at = time.monotonic() + max(left - ahead, 0.0)
        return self._headers

    def invalidate(self) -> None:
        self._renew_at = 0.0
        self._stale = True

    def _fetch(self) -> tuple[str, dt.datetime | None]:
        """A token valid for a while yet (blocking: runs in a thread)."""
        from keystoneauth1 import exceptions as ks_exc

        auth = self.session.auth
        assert auth is not None
        if self._stale or self._renew_at:
            auth.invalidate()  # keystoneauth would hand back its token until it has expired
        self._stale = False
        try:
            found = auth.get_access(self.session)  # type: ignore[attr-defined]
        except ks_exc.ClientException as exc:
            raise TokenUnavailable(f"cannot get a token from Keystone at {self.auth_url} "
                                   f"for [keystone_authtoken] username: {exc}") from None
        return str(found.auth_token), found.expires


def service_token(conf: Config) -> ServiceToken | None:
    """The service user's token source when auth_strategy is keystone; None otherwise."""
    if conf.DEFAULT.auth_strategy != "keystone":
        return None
    from ironsight.common.auth.keystone import service_session

    return ServiceToken(service_session(conf), conf.keystone_authtoken.auth_url)
