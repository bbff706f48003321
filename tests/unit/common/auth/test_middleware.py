"""Reading HTTP Basic credentials, the http_basic authenticator's answers, and the
middleware's answers (401 with the challenge, 403, 503) for any authenticator."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import bcrypt
import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ironsight.common.auth.htpasswd import UserFile
from ironsight.common.auth.identity import Identity, Role
from ironsight.common.auth.middleware import (
    AuthMiddleware,
    Forbidden,
    HttpBasic,
    Unavailable,
    basic_credentials,
)
from ironsight.common.auth.policy import AccessRules


def header(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def headers(user: str, password: str) -> dict[str, str]:
    return {"authorization": header(user, password)}


def test_basic_credentials_are_read() -> None:
    assert basic_credentials(header("alice", "pa:ss")) == ("alice", "pa:ss")


@pytest.mark.parametrize("value", [None, "", "Bearer abc", "Basic !!!", "Basic " + "A" * 5000,
                                   "Basic " + base64.b64encode(b"nocolon").decode(),
                                   "Basic " + base64.b64encode(b"\xff\xfe:x").decode()])
def test_anything_else_is_no_credentials(value: str | None) -> None:
    assert basic_credentials(value) is None


@pytest.fixture
def authenticator(tmp_path: Path) -> HttpBasic:
    path = tmp_path / "htpasswd"
    hashed = bcrypt.hashpw(b"pw", bcrypt.gensalt(4)).decode()
    path.write_text(f"alice:{hashed}\nbob:{hashed}\n")
    return HttpBasic(UserFile(path), {"alice": Role.ADMIN}, Role.READER)


async def test_a_configured_user_gets_their_role(authenticator: HttpBasic) -> None:
    assert await authenticator.identify(headers("alice", "pw")) == Identity("alice", Role.ADMIN)


async def test_an_unlisted_user_gets_the_default_role(authenticator: HttpBasic) -> None:
    assert await authenticator.identify(headers("bob", "pw")) == Identity("bob", Role.READER)


async def test_without_a_default_role_an_unlisted_user_is_refused(
        authenticator: HttpBasic) -> None:
    strict = HttpBasic(authenticator.users, authenticator.roles, None)
    assert await strict.identify(headers("bob", "pw")) is None


async def test_a_wrong_password_is_refused(authenticator: HttpBasic) -> None:
    assert await authenticator.identify(headers("alice", "nope")) is None


# --- the middleware's answers, whatever the authenticator ------------------------------------


class Scripted:
    """An authenticator whose answer the test picks (the middleware's contract only)."""

    name = "scripted"
    challenge = 'Scripted realm="x"'
    asks_for = "a scripted credential"
    unauthorized_body: dict[str, Any] | None = None

    def __init__(self, answer: Identity | Exception | None) -> None:
        self.answer = answer
        self.seen: dict[str, str] = {}

    async def identify(self, headers: Mapping[str, str]) -> Identity | None:
        self.seen = dict(headers)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def app_with(auth: Scripted) -> httpx.AsyncClient:
    async def ok(request: Request) -> Response:
        return PlainTextResponse("ok")

    def deny(scope: Any, status: int, message: str, headers: dict[str, str]) -> Response:
        return JSONResponse({"error": message}, status_code=status, headers=headers)

    app = Starlette(routes=[Route("/v1/nodes", ok, methods=["GET", "DELETE"])],
                    middleware=[Middleware(AuthMiddleware, authenticator=auth,
                                           rules=AccessRules(), deny=deny)])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


async def test_the_authenticator_sees_the_request_headers() -> None:
    auth = Scripted(Identity("alice", Role.READER))
    async with app_with(auth) as client:
        assert (await client.get("/v1/nodes", headers={"X-Auth-Token": "t1"})).text == "ok"
    assert auth.seen["x-auth-token"] == "t1"


async def test_no_identity_gets_401_with_the_authenticators_challenge() -> None:
    async with app_with(Scripted(None)) as client:
        resp = await client.get("/v1/nodes")
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"] == 'Scripted realm="x"'
    assert resp.json()["error"] == "Authentication required: give a scripted credential."


async def test_a_caller_refused_by_the_authenticator_gets_403_with_its_reason() -> None:
    async with app_with(Scripted(Forbidden("no roles here"))) as client:
        resp = await client.get("/v1/nodes")
    assert (resp.status_code, resp.json()["error"]) == (403, "no roles here")


async def test_credentials_that_cannot_be_checked_get_503() -> None:
    async with app_with(Scripted(Unavailable("Keystone is down"))) as client:
        resp = await client.delete("/v1/nodes")
    assert (resp.status_code, resp.json()["error"]) == (503, "Keystone is down")


async def test_a_burst_of_the_same_credentials_costs_one_bcrypt_check(
        authenticator: HttpBasic, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    checks = []
    real = authenticator.users.check

    def counted(user: str, password: str) -> bool:
        checks.append(user)
        return real(user, password)

    monkeypatch.setattr(authenticator.users, "check", counted)
    alice = {"authorization": header("alice", "pw")}
    results = await asyncio.gather(*(authenticator.identify(alice) for _ in range(8)))
    assert results == [Identity("alice", Role.ADMIN)] * 8
    assert checks == ["alice"]


def in_process_app(auth: Scripted) -> Any:
    async def ok(request: Request) -> Response:
        return PlainTextResponse(request.state.identity.user)

    def deny(scope: Any, status: int, message: str, headers: dict[str, str]) -> Response:
        return JSONResponse({"error": message}, status_code=status, headers=headers)

    return Starlette(routes=[Route("/v1/nodes", ok, methods=["GET", "DELETE"])],
                     middleware=[Middleware(AuthMiddleware, authenticator=auth,
                                            rules=AccessRules(), deny=deny)])


async def test_an_in_process_caller_acts_as_its_preset_identity_unasked() -> None:
    from ironsight.common.asgi_call import AsgiCall
    from ironsight.common.auth.middleware import PRESET_IDENTITY

    auth = Scripted(None)  # would refuse anyone it is asked about
    call = AsgiCall(in_process_app(auth), server=("127.0.0.1", 80), client=("127.0.0.1", 1))
    answer = await call.request("GET", "/v1/nodes",
                                extra_scope={PRESET_IDENTITY: Identity("ops", Role.READER)})
    assert (answer.status, answer.body) == (200, b"ops")
    assert auth.seen == {}
    # the preset identity's role still decides: a reader may not write
    refused = await call.request("DELETE", "/v1/nodes",
                                 extra_scope={PRESET_IDENTITY: Identity("ops", Role.READER)})
    assert refused.status == 403


async def test_a_request_header_cannot_preset_an_identity() -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=in_process_app(
            Scripted(None))), base_url="http://t") as client:
        resp = await client.get("/v1/nodes", headers={"ironsight.identity": "admin"})
    assert resp.status_code == 401
