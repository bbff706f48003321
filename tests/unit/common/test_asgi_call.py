"""`AsgiCall`: a request answered by an ASGI application of this process as uvicorn would have
it answered over HTTP (scope, body, HEAD, errors, timeouts, context)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ironsight.common.api.body import PayloadTooLarge, read_body
from ironsight.common.asgi_call import AsgiCall, IncompleteAnswer
from ironsight.common.auth.identity import ANONYMOUS_ADMIN, act_as, acting_user

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("test_asgi_call_seen", default="")
LIMIT = 64


async def echo(request: Request) -> Response:
    body = await request.body()
    return JSONResponse({
        "method": request.method, "path": request.url.path,
        "raw_path": request.scope["raw_path"].decode(), "query": dict(request.query_params),
        "query_string": request.scope["query_string"].decode(),
        "headers": dict(request.headers), "client": list(request.client or ()),
        "server": list(request.scope["server"]), "body": body.decode(),
        "seen": SEEN.get()}, status_code=201, headers={"X-Answer": "yes"})


async def limited(request: Request) -> Response:
    try:
        await read_body(request, LIMIT)
    except PayloadTooLarge as exc:
        return JSONResponse({"error": str(exc)}, status_code=413)
    return Response(status_code=204)


async def crash(request: Request) -> Response:
    raise RuntimeError("boom")


async def head_or_delete(request: Request) -> Response:
    body = await request.body()
    if request.method == "DELETE":
        assert body == b""
        return Response(status_code=204)
    return Response(b"not sent for a HEAD", media_type="text/plain")


async def marks_context(request: Request) -> Response:
    SEEN.set("set by the application")
    act_as(ANONYMOUS_ADMIN)
    return Response(status_code=204)


async def slow(request: Request) -> Response:
    await asyncio.sleep(0.3)
    request.app.state.finished = True
    return Response(status_code=204)


APP = Starlette(routes=[
    Route("/echo/{rest:path}", echo, methods=["GET", "POST", "PUT", "PATCH"]),
    Route("/limited", limited, methods=["POST"]),
    Route("/crash", crash, methods=["GET"]),
    Route("/thing", head_or_delete, methods=["GET", "HEAD", "DELETE"]),
    Route("/context", marks_context, methods=["POST"]),
    Route("/slow", slow, methods=["GET"])])


def caller(app: Any = APP) -> AsgiCall:
    return AsgiCall(app, server=("127.0.0.1", 6385), client=("127.0.0.1", 0))


async def test_status_body_and_headers_go_through() -> None:
    answer = await caller().request(
        "POST", "/echo/a%20b", headers=[("Host", "127.0.0.1:6385"), ("X-Auth-Token", "t"),
                                        ("Content-Type", "application/json")],
        body=b'{"x": 1}')
    assert answer.status == 201
    assert answer.header("x-answer") == "yes"
    assert answer.header("Content-Type") == "application/json"
    doc = json.loads(answer.body)
    assert doc["method"] == "POST"
    assert doc["path"] == "/echo/a b"  # unquoted, as uvicorn gives it
    assert doc["raw_path"] == "/echo/a%20b"
    assert doc["body"] == '{"x": 1}'
    assert doc["headers"] == {"host": "127.0.0.1:6385", "x-auth-token": "t",
                              "content-type": "application/json", "content-length": "8"}
    assert doc["client"] == ["127.0.0.1", 0]
    assert doc["server"] == ["127.0.0.1", 6385]


async def test_the_query_string_reaches_the_application() -> None:
    answer = await caller().request("GET", "/echo/x", query="node=u1&limit=1000&f=a%2Cb+c")
    doc = json.loads(answer.body)
    assert doc["query_string"] == "node=u1&limit=1000&f=a%2Cb+c"
    assert doc["query"] == {"node": "u1", "limit": "1000", "f": "a,b c"}
    assert "content-length" not in doc["headers"]  # a GET without a body has none


async def test_a_body_over_the_applications_limit_is_refused_by_it() -> None:
    answer = await caller().request("POST", "/limited", body=b"x" * (LIMIT + 1))
    assert answer.status == 413
    assert "limit is 64" in json.loads(answer.body)["error"]  # the declared length's check
    assert (await caller().request("POST", "/limited", body=b"x" * LIMIT)).status == 204


async def test_an_exception_in_the_application_is_its_500(caplog: pytest.LogCaptureFixture
                                                         ) -> None:
    with caplog.at_level(logging.ERROR):
        answer = await caller().request("GET", "/crash")
    assert answer.status == 500  # Starlette's error middleware answered, then raised
    assert answer.body == b"Internal Server Error"
    assert "Exception in ASGI application" in caplog.text
    assert "boom" in caplog.text


async def test_an_application_failing_before_it_answers_gets_uvicorns_500() -> None:
    async def bare(scope: Any, receive: Any, send: Any) -> None:
        raise ValueError("no answer")

    answer = await caller(bare).request("GET", "/")
    assert (answer.status, answer.body) == (500, b"Internal Server Error")
    assert answer.header("content-type") == "text/plain; charset=utf-8"


async def test_an_application_returning_without_an_answer_gets_500() -> None:
    async def silent(scope: Any, receive: Any, send: Any) -> None:
        return None

    assert (await caller(silent).request("GET", "/")).status == 500


async def test_an_answer_started_and_not_finished_is_a_broken_connection() -> None:
    async def broken(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"half", "more_body": True})
        raise RuntimeError("gone")

    with pytest.raises(IncompleteAnswer):
        await caller(broken).request("GET", "/")


async def test_head_has_no_body_and_delete_sends_an_empty_one() -> None:
    head = await caller().request("HEAD", "/thing")
    assert (head.status, head.body) == (200, b"")
    assert head.header("content-length") == str(len(b"not sent for a HEAD"))
    delete = await caller().request("DELETE", "/thing")
    assert (delete.status, delete.body) == (204, b"")


async def test_a_bodiless_write_declares_an_empty_body() -> None:
    answer = await caller().request("PUT", "/echo/x")
    assert json.loads(answer.body)["headers"]["content-length"] == "0"


async def test_the_application_runs_in_a_context_of_its_own() -> None:
    """What the application sets (the caller's identity) does not leak into the caller, and
    the caller's context variables do not reach the application."""
    SEEN.set("the caller's")
    answer = await caller().request("POST", "/context")
    assert answer.status == 204
    assert SEEN.get() == "the caller's"
    assert acting_user() is None
    echoed = json.loads((await caller().request("GET", "/echo/x")).body)
    assert echoed["seen"] == ""


async def test_a_timeout_leaves_the_request_running() -> None:
    """As over HTTP: the client gives up, the server finishes the request."""
    APP.state.finished = False
    call = caller()
    with pytest.raises(TimeoutError):
        await call.request("GET", "/slow", timeout=0.05)
    assert not APP.state.finished
    await asyncio.sleep(0.5)
    assert APP.state.finished
    assert not call._running


async def test_a_cancelled_caller_leaves_the_request_running() -> None:
    APP.state.finished = False
    task = asyncio.ensure_future(caller().request("GET", "/slow"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.5)
    assert APP.state.finished


async def test_receive_after_the_body_waits_for_the_end_of_the_answer() -> None:
    """An application (or middleware) listening for the disconnect gets it once it answered,
    not before."""
    events: list[str] = []

    async def listens(scope: Any, receive: Any, send: Any) -> None:
        events.append((await receive())["type"])
        waiting = asyncio.ensure_future(receive())
        await asyncio.sleep(0.01)
        assert not waiting.done()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        events.append((await waiting)["type"])

    assert (await caller(listens).request("POST", "/", body=b"{}")).status == 204
    assert events == ["http.request", "http.disconnect"]
