"""What every console page shares: the session it is served to, rendering, the checks on a
form (session, CSRF, role) and the security headers."""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from ironsight.baremetal.console.calls import Calls
from ironsight.baremetal.console.session import (
    COOKIE,
    Revocations,
    Session,
    Sessions,
    check_csrf,
)
from ironsight.common.auth.identity import Role
from ironsight.common.auth.middleware import Authenticator
from ironsight.common.config import Config
from ironsight.common.ratelimit import RateLimiter

LOG = logging.getLogger(__name__)
HERE = Path(__file__).parent
PREFIX = "/ui"
# no inline script or style, nothing from elsewhere: the console works with no internet
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


@dataclass
class Console:
    """The console's parts, shared by its pages (request.app.state.console)."""

    conf: Config
    calls: Calls
    sessions: Sessions
    authenticator: Authenticator
    templates: Jinja2Templates
    revocations: Revocations | None = None  # None: a logout ends the cookie in its browser
    logins: RateLimiter | None = None  # attempts per client address (None: no limit)

    @property
    def open(self) -> bool:
        """noauth: nobody logs in (the API asks nobody either)."""
        return self.authenticator.name == "noauth"


def console_of(request: Request) -> Console:
    found: Console = request.app.state.console
    return found


class Refused(Exception):
    """A request the console turns down, shown on an error page with its status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def session_of(request: Request) -> Session | None:
    found: Session | None = request.scope.get("ironsight.console_session")
    return found


def project_of(request: Request) -> str | None:
    """The project the session's user acts for (None: the whole fleet)."""
    session = session_of(request)
    return session.project if session is not None else None


def fleet_wide(request: Request) -> None:
    """Pages that show the whole fleet (the board, discovery) read discoverd as the service,
    which cannot tell one project's nodes from another's there: operators' only."""
    project = project_of(request)
    if project is not None:
        raise Refused(403, f"This page shows the whole fleet, and you act for project "
                           f"{project!r}: the node list shows the nodes it owns.")


def render(request: Request, template: str, code: int = 200, **context: Any) -> Response:
    console = console_of(request)
    context.update(request=request, session=session_of(request), prefix=PREFIX,
                   auth=console.authenticator.name)
    return console.templates.TemplateResponse(request, template, context, status_code=code)


def secure_cookie(request: Request, conf: Config) -> bool:
    mode = conf.console.secure_cookie
    if mode != "auto":
        return mode == "always"
    if request.url.scheme == "https" or \
            request.headers.get("x-forwarded-proto", "").lower() == "https":
        return True
    host = request.url.hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def set_session(response: Response, request: Request, session: Session) -> None:
    console = console_of(request)
    response.set_cookie(COOKIE, console.sessions.encode(session),
                        max_age=console.sessions.lifetime, path=PREFIX + "/",
                        secure=secure_cookie(request, console.conf), httponly=True,
                        samesite="strict")


def to_login(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"{PREFIX}/login?next={quote(target, safe='')}", status_code=303)


async def checked_form(request: Request, *, role: Role = Role.MEMBER) -> dict[str, Any]:
    """The form of a POST from the console's own pages by a user of at least `role`:
    Refused (403) for a missing or wrong CSRF token, a foreign Origin or too low a role."""
    session = session_of(request)
    if session is None:
        raise Refused(401, "Your session has ended: log in again.")
    refuse_foreign(request)
    form = await request.form(max_files=0, max_fields=20000)
    if not check_csrf(session, _text(form.get("csrf"))):
        raise Refused(403, "The form's CSRF token is missing or wrong: reload the page and "
                           "try again.")
    if session.role < role:
        raise Refused(403, f"User {session.user!r} has role {session.role.name.lower()}; "
                           f"this needs role {role.name.lower()}.")
    return {key: form.getlist(key) for key in form}


def refuse_foreign(request: Request) -> None:
    """A browser names the page a form came from (Origin): another host is refused. The
    scheme is not compared: behind a TLS-terminating proxy the console sees plain HTTP."""
    origin = request.headers.get("origin")
    if origin and urlsplit(origin).netloc != request.url.netloc:
        raise Refused(403, "The form was sent from another site.")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def first(form: dict[str, Any], name: str, default: str = "") -> str:
    values = form.get(name) or []
    return values[0] if values and isinstance(values[0], str) else default
