"""One HTTP request answered by an ASGI application of this very process, without a socket:
what a client on loopback would get from uvicorn serving that application, for the cost of
the application alone.

`ironsight serve` runs both services in one event loop; discoverd's calls to the bare-metal
API then go here instead of through aiohttp, the kernel's loopback and uvicorn's parser
(cli/server.py decides when). The request meets the whole application, every middleware
included, and gets the answer it would get over HTTP, down to what uvicorn itself does around
an application:

- the scope uvicorn builds (`client` is the address the connection would come from, `path`
  unquoted from `raw_path`, lower-case header names, `state`);
- the request runs in a task of its own with a context of its own, as each of uvicorn's
  requests does: what the application sets in context variables (the caller's identity,
  `common/auth/identity.py`) stays in it, and the caller's do not reach it;
- the caller going away (a timeout, a cancellation) does not stop the request: it runs to its
  end, as uvicorn lets a request run on after its client disconnected;
- an exception out of the application is logged and, when no answer was started, answered
  500 `Internal Server Error` (Starlette's own error middleware answers first when present);
  an answer started and never finished is a broken connection (`IncompleteAnswer`);
- a HEAD answer has no body.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from starlette.types import ASGIApp, Message

LOG = logging.getLogger(__name__)
ACCESS_LOG = logging.getLogger("uvicorn.access")  # uvicorn's access log, same format

# uvicorn's own answer when the application fails before answering
_ERROR_HEADERS = [(b"content-type", b"text/plain; charset=utf-8"),
                  (b"content-length", b"21"), (b"connection", b"close")]
_ERROR_BODY = b"Internal Server Error"
# methods whose request has no body unless given one (aiohttp sends no Content-Length: 0)
_BODILESS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "CONNECT"})


class IncompleteAnswer(ConnectionError):
    """The application started its answer and did not finish it (over HTTP, uvicorn closes
    the connection: the client sees a broken one)."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: list[tuple[bytes, bytes]]  # as the application sent them (lower-case names)
    body: bytes

    def header(self, name: str) -> str | None:
        wanted = name.lower().encode("latin-1")
        for key, value in self.headers:
            if key.lower() == wanted:
                return value.decode("latin-1")
        return None


class _Exchange:
    """One request's receive and send, and what the application answered."""

    __slots__ = ("body", "chunks", "complete", "head", "headers", "received", "started",
                 "status", "waiter")

    def __init__(self, body: bytes, head: bool) -> None:
        self.body = body
        self.head = head
        self.received = False
        self.started = False
        self.complete = False
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: list[bytes] = []
        self.waiter: asyncio.Future[None] | None = None

    async def receive(self) -> Message:
        if not self.received:
            self.received = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        if not self.complete:  # the body is read: only the end of the exchange is left
            if self.waiter is None:
                self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start" and not self.started:
            self.started = True
            self.status = int(message["status"])
            self.headers = list(message.get("headers", ()))
        elif kind == "http.response.body" and self.started and not self.complete:
            if not self.head:
                self.chunks.append(bytes(message.get("body", b"")))
            if not message.get("more_body", False):
                self.finish()
        else:
            raise RuntimeError(f"Unexpected ASGI message '{kind}' sent, in response to an "
                               "in-process call.")

    def finish(self) -> None:
        self.complete = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


class AsgiCall:
    """Requests to `app` as from a client at `client` connected to `server` (host, port)."""

    def __init__(self, app: ASGIApp, *, server: tuple[str, int], client: tuple[str, int],
                 scheme: str = "http", access_log: bool = False) -> None:
        self.app = app
        self.server = server
        self.client = client
        self.scheme = scheme
        self.access_log = access_log
        self._running: set[asyncio.Task[None]] = set()  # requests their caller left

    async def request(self, method: str, path: str, *, query: str = "",
                      headers: Iterable[tuple[str, str]] = (), body: bytes | None = None,
                      timeout: float | None = None,
                      extra_scope: Mapping[str, Any] | None = None) -> Answer:
        """`path` as on the request line (percent-encoded), `query` without its `?`;
        `extra_scope`: keys added to the request's scope (PRESET_IDENTITY: the caller).
        A `Content-Length` is added as an HTTP client adds it. Raises TimeoutError after
        `timeout` seconds (the request itself runs on), IncompleteAnswer as described."""
        raw = [(name.lower().encode("latin-1"), value.encode("latin-1"))
               for name, value in headers]
        if body is not None or method not in _BODILESS:
            raw.append((b"content-length", str(len(body or b"")).encode()))
        raw_path = path.encode("ascii")
        scope: dict[str, Any] = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1", "server": self.server, "client": self.client,
            "scheme": self.scheme, "root_path": "", "headers": raw, "state": {},
            "method": method, "path": unquote(path) if "%" in path else path,
            "raw_path": raw_path, "query_string": query.encode("ascii")}
        if extra_scope:
            scope.update(extra_scope)
        exchange = _Exchange(body or b"", method == "HEAD")
        # a task of its own, in an empty context: as uvicorn runs each request
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._run(scope, exchange), context=contextvars.Context())
        self._running.add(task)
        # the caller waits for the task's end on a future of its own, which it may give up
        # (a timeout, a cancellation) without touching the task: what asyncio.shield and
        # asyncio.timeout would do, at less cost on this hot path (bench/RESULTS.md)
        waiter = loop.create_future()
        task.add_done_callback(lambda done: self._ended(done, waiter))
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()
        if not exchange.complete:
            raise IncompleteAnswer(f"{method} {path}: the application did not finish its "
                                   "answer")
        if self.access_log:
            ACCESS_LOG.info('%s:%d - "%s %s HTTP/1.1" %d', self.client[0], self.client[1],
                            method, f"{path}?{query}" if query else path, exchange.status)
        return Answer(exchange.status, exchange.headers, b"".join(exchange.chunks))

    def _ended(self, task: asyncio.Task[None], waiter: asyncio.Future[None]) -> None:
        self._running.discard(task)
        # retrieved even when the caller has gone; never an application's exception (_run
        # answers those): a cancellation at the loop's end
        error = None if task.cancelled() else task.exception()
        if waiter.done():
            return
        if task.cancelled():
            waiter.cancel()
        elif error is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(None)

    async def _run(self, scope: dict[str, Any], exchange: _Exchange) -> None:
        try:
            await self.app(scope, exchange.receive, exchange.send)
        except Exception as exc:  # what uvicorn does with it
            LOG.error("Exception in ASGI application (in-process %s %s)", scope["method"],
                      scope["path"], exc_info=exc)
            if not exchange.started:
                self._internal_error(exchange)
        else:
            if not exchange.started:
                LOG.error("ASGI callable returned without starting response (in-process "
                          "%s %s).", scope["method"], scope["path"])
                self._internal_error(exchange)
        finally:
            if exchange.waiter is not None and not exchange.waiter.done():
                exchange.waiter.set_result(None)

    @staticmethod
    def _internal_error(exchange: _Exchange) -> None:
        exchange.started = True
        exchange.status = 500
        exchange.headers = list(_ERROR_HEADERS)
        exchange.chunks = [] if exchange.head else [_ERROR_BODY]
        exchange.complete = True


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())
