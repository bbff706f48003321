"""The authentication middleware both services' applications are wrapped in: who is calling
(an `Authenticator`), and may they (`AccessRules`). A refusal is answered in the service's own
error envelope: 401 with the authenticator's `WWW-Authenticate` challenge when credentials
are missing or wrong, 403 when the caller's role is too low, 503 when whoever checks
credentials (Keystone) cannot be asked."""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ironsight.common.auth.htpasswd import UserFile
from ironsight.common.auth.identity import ANONYMOUS_ADMIN, Identity, Role, act_as
from ironsight.common.auth.policy import AccessRules

REALM = "ironsight"
# A scope key only an in-process caller can set (a server builds scopes from the wire, with
# string keys of the ASGI spec): the request is made for this Identity, already
# authenticated. The console calls the API so, as its logged-in user (baremetal/console).
PRESET_IDENTITY = "ironsight.identity"


class Authenticator(Protocol):
    name: str
    challenge: str  # the WWW-Authenticate header of a 401
    asks_for: str  # what a 401's message tells the caller to give
    # a 401's whole body where the mirrored upstream answers in its own words (Ironic's
    # keystonemiddleware), else None: the API's envelope
    unauthorized_body: dict[str, Any] | None

    async def identify(self, headers: Mapping[str, str]) -> Identity | None:
        """The caller named by the request's headers (lower-case names); None: not
        authenticated. Raises `Forbidden` for a caller known but refused, `Unavailable`
        when the credentials cannot be checked now. Runs on every request: keep it cheap."""


class Forbidden(Exception):
    """Credentials that are valid but give no role here (answered 403; the message says why)."""


class Unavailable(Exception):
    """Credentials that cannot be checked now (answered 503; the message says why)."""


class NoAuth:
    name = "noauth"
    challenge = ""
    asks_for = ""
    unauthorized_body: dict[str, Any] | None = None

    async def identify(self, headers: Mapping[str, str]) -> Identity | None:
        return ANONYMOUS_ADMIN


def basic_credentials(authorization: str | None) -> tuple[str, str] | None:
    """(user, password) of a `Basic` Authorization header; None when it is not one."""
    if not authorization:
        return None
    scheme, _, encoded = authorization.partition(" ")
    if scheme.lower() != "basic" or len(encoded) > 4096:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep and user else None


class OnceAtATime:
    """Slow checks (bcrypt, a round trip to Keystone) run in a thread, and once for a burst of
    requests with the same credentials (a client opening its connections at once), not once
    per request: concurrent callers with the same key share the one running check."""

    def __init__(self) -> None:
        self._running: dict[object, asyncio.Future[object]] = {}

    async def run(self, key: object, check: Callable[[], object]) -> object:
        pending = self._running.get(key)
        if pending is None:
            pending = asyncio.ensure_future(asyncio.to_thread(check))
            self._running[key] = pending
            pending.add_done_callback(lambda _: self._running.pop(key, None))
        return await asyncio.shield(pending)


class HttpBasic:
    """Users of an htpasswd file, each with the role configured for them."""

    name = "http_basic"
    challenge = f'Basic realm="{REALM}"'
    asks_for = "the credentials of a user of this service (HTTP Basic)"
    unauthorized_body: dict[str, Any] | None = None

    def __init__(self, users: UserFile, roles: Mapping[str, Role], default_role: Role | None,
                 projects: Mapping[str, str] | None = None) -> None:
        self.users = users
        self.roles = dict(roles)
        self.default_role = default_role
        self.projects = dict(projects or {})
        self._checks = OnceAtATime()

    async def identify(self, headers: Mapping[str, str]) -> Identity | None:
        credentials = basic_credentials(headers.get("authorization"))
        if credentials is None:
            return None
        user, password = credentials
        role = self.roles.get(user, self.default_role)
        if role is None:
            return None
        # bcrypt is slow on purpose: off the event loop, once per burst (OnceAtATime)
        if not self.users.remembered(user, password) and not await self._checks.run(
                (user, password), lambda: self.users.check(user, password)):
            return None
        return Identity(user, role, self.projects.get(user))


# The refusal of a request (its scope): status, message, headers to add.
Deny = Callable[[Scope, int, str, dict[str, str]], Response]
# Whether a route of the application serves this request's method and path.
Routed = Callable[[Scope], bool]
# For a caller acting for a project whose role falls short: the resource's "not found" text
# when its project may not even know the resource exists (then 404, not 403), else None.
Conceal = Callable[[Scope, Identity], Awaitable[str | None]]


class AuthMiddleware:
    """Authenticates before routing (an anonymous caller learns nothing, not even which paths
    exist) but weighs an authenticated caller's role after it, as Ironic does in its
    controllers: a path or method nothing serves is a 404 or 405 whoever asks, not a 403."""

    def __init__(self, app: ASGIApp, authenticator: Authenticator, rules: AccessRules,
                 deny: Deny, routed: Routed | None = None,
                 conceal: Conceal | None = None) -> None:
        self.app = app
        self.authenticator = authenticator
        self.rules = rules
        self.deny = deny
        self.routed = routed
        self.conceal = conceal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        needed = self.rules.required(method, path)
        if needed is None:
            await self.app(scope, receive, send)
            return
        preset = scope.get(PRESET_IDENTITY)
        try:
            identity = preset if isinstance(preset, Identity) else \
                await self.authenticator.identify(Headers(scope=scope))
        except Forbidden as exc:
            await self._refuse(scope, receive, send, 403, str(exc), {})
            return
        except Unavailable as exc:
            await self._refuse(scope, receive, send, 503, str(exc), {})
            return
        if identity is None and self.authenticator.unauthorized_body is not None:
            await JSONResponse(self.authenticator.unauthorized_body, status_code=401,
                               headers={"WWW-Authenticate": self.authenticator.challenge})(
                scope, receive, send)
            return
        if identity is None:
            await self._refuse(scope, receive, send, 401,
                               f"Authentication required: give {self.authenticator.asks_for}.",
                               {"WWW-Authenticate": self.authenticator.challenge})
            return
        if identity.role < needed and (self.routed is None or self.routed(scope)):
            missing = await self.conceal(scope, identity) \
                if self.conceal is not None and identity.project else None
            if missing is not None:  # as Ironic: what a project may not see is not found
                await self._refuse(scope, receive, send, 404, missing, {})
                return
            await self._refuse(scope, receive, send, 403,
                               f"User {identity.user!r} has role {identity.role.name.lower()}"
                               f"; {method} {path} needs role {needed.name.lower()}.", {})
            return
        scope.setdefault("state", {})["identity"] = identity
        act_as(identity)
        await self.app(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int,
                      message: str, headers: dict[str, str]) -> None:
        await self.deny(scope, status, message, headers)(scope, receive, send)
