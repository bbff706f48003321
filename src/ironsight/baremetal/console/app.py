"""The console's application, mounted at /ui on the bare-metal API's listener: its routes,
the session every page is served in, and its answers to refusals."""

from __future__ import annotations

import logging

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ironsight.baremetal.console import board, bulk, fleet, inbox, node
from ironsight.baremetal.console.calls import Calls
from ironsight.baremetal.console.filters import COLUMNS
from ironsight.baremetal.console.login import LoginRefused, log_in
from ironsight.baremetal.console.pages import (
    HERE,
    PREFIX,
    SECURITY_HEADERS,
    Console,
    Refused,
    checked_form,
    console_of,
    refuse_foreign,
    render,
    session_of,
    set_session,
    to_login,
)
from ironsight.baremetal.console.session import (
    COOKIE,
    Revocations,
    Sessions,
    load_key,
    session_key_path,
)
from ironsight.baremetal.discoverd_proxy import DiscoverdProxy
from ironsight.common.auth.identity import ANONYMOUS_ADMIN, Role
from ironsight.common.auth.strategy import authenticator
from ironsight.common.config import Config
from ironsight.common.exceptions import DatabaseUnavailable
from ironsight.common.ratelimit import RateLimiter, TooManyRequests

LOG = logging.getLogger(__name__)
OPEN_PATHS = ("/login", "/static/")  # served without a session


def _safe_next(raw: str | None) -> str:
    """Where to go after the login: a page of the console only (no open redirect)."""
    if raw and raw.startswith(PREFIX + "/") and not raw.startswith("//") and "\\" not in raw:
        return raw
    return PREFIX + "/nodes"


async def login_form(request: Request) -> Response:
    console = console_of(request)
    if console.open:
        return RedirectResponse(_safe_next(request.query_params.get("next")), status_code=303)
    return render(request, "login.html", next=_safe_next(request.query_params.get("next")),
                  error=None, user="")


async def login(request: Request) -> Response:
    console = console_of(request)
    refuse_foreign(request)  # no login into someone else's account from another site
    form = await request.form(max_files=0, max_fields=10)
    if console.logins is not None:
        address = request.client.host if request.client else None
        try:  # against guessing passwords: bcrypt makes each guess slow, this makes few
            console.logins.check(address)
        except TooManyRequests as exc:
            LOG.warning("Console login attempts from %s over the limit",
                        address or "an unknown address")
            response = render(request, "login.html", code=429,
                              next=_safe_next(str(form.get("next") or "")),
                              error=f"Too many login attempts from your address: try again "
                                    f"in {exc.retry_after} s.",
                              user=str(form.get("user") or "")[:255])
            response.headers.update(exc.headers)
            return response
    user, password = str(form.get("user") or ""), str(form.get("password") or "")
    project = str(form.get("project") or "").strip()
    target = _safe_next(str(form.get("next") or ""))
    try:
        identity = await log_in(console.conf, console.authenticator, user.strip(), password,
                                project)
    except LoginRefused as exc:
        return render(request, "login.html", code=401, next=target, error=str(exc),
                      user=user[:255])
    response = RedirectResponse(target, status_code=303)
    set_session(response, request, console.sessions.new(identity))
    return response


async def logout(request: Request) -> Response:
    await checked_form(request, role=Role.READER)
    session, revocations = session_of(request), console_of(request).revocations
    if session is not None and revocations is not None:
        try:
            await revocations.revoke(session.sid, session.expires)
        except DatabaseUnavailable:
            raise Refused(503, "The database is unavailable: you are not logged out; try "
                               "again shortly.") from None
    response = RedirectResponse(PREFIX + "/login", status_code=303)
    response.delete_cookie(COOKIE, path=PREFIX + "/")
    return response


async def home(request: Request) -> Response:
    return RedirectResponse(PREFIX + "/nodes", status_code=303)


async def columns_help(request: Request) -> Response:
    return render(request, "help.html", columns=COLUMNS)


class SessionGate:
    """Every page but the login's needs a session (noauth: everyone gets one, as admin);
    refusals become pages; security headers go on everything."""

    def __init__(self, app: ASGIApp, console: Console) -> None:
        self.app = app
        self.console = console

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        request = Request(scope, receive)
        path = scope["path"][len(scope.get("root_path", "")):] if scope.get("root_path") \
            else scope["path"]
        # pages are never kept (they show one user's view); the stylesheet and script are,
        # and asked again each time with their ETag (a 304 when unchanged)
        caching = b"no-cache" if path.startswith("/static/") else b"no-store"

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()
                            if k.lower().encode() not in present]
                headers.append((b"cache-control", caching))
                message = {**message, "headers": headers}
            await send(message)

        session = self.console.sessions.decode(request.cookies.get(COOKIE))
        revocations = self.console.revocations
        if session is not None and revocations is not None and not self.console.open \
                and not path.startswith("/static/"):  # assets show nobody's data
            try:
                if await revocations.revoked(session.sid):
                    session = None  # logged out: this is a copy of the cookie, or a replay
            except DatabaseUnavailable:
                scope["ironsight.console_session"] = None
                await _error(request, 503, "The database is unavailable: try again shortly.")(
                    scope, receive, secured)
                return
        fresh = None
        if session is None and self.console.open:
            session = fresh = self.console.sessions.new(ANONYMOUS_ADMIN)
        scope["ironsight.console_session"] = session
        if session is None and not path.startswith(OPEN_PATHS):
            if scope["method"] in ("GET", "HEAD"):
                await to_login(request)(scope, receive, secured)
            else:
                await _error(request, 401, "Your session has ended: log in again.")(
                    scope, receive, secured)
            return
        if fresh is not None:
            async def with_cookie(message: Message) -> None:
                if message["type"] == "http.response.start":
                    response = Response()
                    set_session(response, request, fresh)
                    message = {**message, "headers": [*message.get("headers", []),
                                                      *response.raw_headers[-1:]]}
                await secured(message)
            await self.app(scope, receive, with_cookie)
            return
        await self.app(scope, receive, secured)


def _error(request: Request, status: int, message: str) -> Response:
    return render(request, "error.html", code=status, status_code=status, message=message)


async def refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refused)
    return _error(request, exc.status, exc.message)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(request, exc.status_code, str(exc.detail))


def create_console(conf: Config, api: ASGIApp, discoverd: DiscoverdProxy,
                   revocations: Revocations | None = None) -> Starlette:
    sessions = Sessions(load_key(session_key_path(conf.console.session_key_file,
                                                  conf.state_dir)),
                        conf.console.session_lifetime)
    templates = Jinja2Templates(env=jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined if conf.DEFAULT.debug else jinja2.Undefined))
    console = Console(conf, Calls(api, discoverd, server=(conf.api.host, conf.api.port)),
                      sessions, authenticator(conf), templates, revocations,
                      RateLimiter(conf.console.login_attempts_per_minute,
                                  conf.console.login_attempts_per_minute)
                      if conf.console.login_attempts_per_minute else None)
    routes = [
        Route("/", home, methods=["GET"]),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/nodes", fleet.fleet_page, methods=["GET"]),
        Route("/nodes/bulk", bulk.confirm, methods=["POST"]),
        Route("/nodes/bulk/run", bulk.run, methods=["POST"]),
        Route("/compare", node.compare, methods=["GET"]),
        Route("/help", columns_help, methods=["GET"]),
        Route("/nodes/{node}", node.node_page, methods=["GET"]),
        Route("/nodes/{node}/document.json", node.raw_json, methods=["GET"]),
        Route("/nodes/{node}/live", node.live, methods=["GET"]),
        Route("/nodes/{node}/log", node.ramdisk_log, methods=["GET"]),
        Route("/board", board.board, methods=["GET"]),
        Route("/discovery", inbox.inbox, methods=["GET"]),
        Route("/discovery/{decision:str}", inbox.decide, methods=["POST"]),
        Route("/discovery/conflicts/{conflict}", inbox.resolve, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={Refused: refused,
                                                       HTTPException: http_error})
    app.state.console = console
    app.add_middleware(SessionGate, console=console)
    # a fleet table is ~80 % markup: compressed, a 50-row page is a fifth (bench/RESULTS.md)
    app.add_middleware(GZipMiddleware, minimum_size=1024)
    return app


class WithConsole:
    """The API's listener with the console beside it: /ui and below to the console, the
    rest to the API as before. Without the API (the console's own listener): / leads to
    the console, anything else is not found."""

    def __init__(self, api: ASGIApp | None, console: ASGIApp) -> None:
        self.api = api
        self.console = console

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            if path == PREFIX:
                await RedirectResponse(PREFIX + "/", status_code=308)(scope, receive, send)
                return
            if path.startswith(PREFIX + "/"):
                # Starlette routes on the path less its root_path
                child = {**scope, "root_path": scope.get("root_path", "") + PREFIX}
                await self.console(child, receive, send)
                return
        if self.api is not None:
            await self.api(scope, receive, send)
        elif scope["type"] == "http" and scope["path"] == "/":
            await RedirectResponse(PREFIX + "/", status_code=307)(scope, receive, send)
        elif scope["type"] == "http":
            await PlainTextResponse("Not Found", status_code=404)(scope, receive, send)
