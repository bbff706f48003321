"""The console's gate in front of its pages and its login's limit, with a stand-in for the
database of ended sessions (the database itself: tests/unit/baremetal/db/
test_console_sessions.py; a logout through a running service: tests/functional/console/
test_pages.py)."""

from __future__ import annotations

from pathlib import Path

import bcrypt
import httpx
from starlette.applications import Starlette

from ironsight.baremetal.console.app import create_console
from ironsight.baremetal.console.pages import Console
from ironsight.baremetal.console.session import Revocations
from ironsight.baremetal.discoverd_proxy import DiscoverdProxy
from ironsight.common import config
from ironsight.common.auth.identity import Identity, Role
from ironsight.common.exceptions import DatabaseUnavailable


class Unreachable:
    """The database of ended sessions, down."""

    async def revoke(self, session: str, expires: float) -> None:
        raise DatabaseUnavailable(OSError("connection refused"))

    async def revoked(self, session: str) -> bool:
        raise DatabaseUnavailable(OSError("connection refused"))


async def no_api(scope: object, receive: object, send: object) -> None:
    raise AssertionError("the API is not to be called")


def console_app(tmp_path: Path, revocations: Revocations | None = None,
                **console: str) -> Starlette:
    """The console with http_basic user `ops` (password `ops-pass`) and no API behind it."""
    (tmp_path / "htpasswd").write_text(
        "ops:" + bcrypt.hashpw(b"ops-pass", bcrypt.gensalt(4)).decode() + "\n")
    conf = config.load(overrides={"DEFAULT": {
        "state_dir": str(tmp_path), "auth_strategy": "http_basic",
        "http_basic_auth_user_file": str(tmp_path / "htpasswd"),
        "http_basic_roles": "ops:member"}, "console": console})
    return create_console(conf, no_api, DiscoverdProxy(conf), revocations)


def client_of(app: Starlette) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                             base_url="http://127.0.0.1")


async def test_a_database_outage_is_a_503_page_not_a_crash_or_a_pass(tmp_path: Path) -> None:
    app = console_app(tmp_path, Unreachable())
    console: Console = app.state.console
    cookie = console.sessions.encode(console.sessions.new(Identity("ops", Role.MEMBER)))
    async with client_of(app) as client:
        resp = await client.get("/nodes", cookies={"ironsight_session": cookie})
    assert resp.status_code == 503
    assert "database is unavailable" in resp.text


async def test_logins_over_the_limit_are_429_with_retry_after_right_or_wrong(
        tmp_path: Path) -> None:
    app = console_app(tmp_path, login_attempts_per_minute="3")
    async with client_of(app) as client:
        tries = [await client.post("/login", data={"user": "ops", "password": password})
                 for password in ("wrong", "wrong", "wrong", "ops-pass")]
    assert [t.status_code for t in tries] == [401, 401, 401, 429]
    assert int(tries[-1].headers["Retry-After"]) >= 1
    assert "Too many login attempts" in tries[-1].text
    assert "ironsight_session" not in tries[-1].headers.get("set-cookie", "")


async def test_a_right_login_under_the_limit_gets_its_session(tmp_path: Path) -> None:
    app = console_app(tmp_path, login_attempts_per_minute="3")
    async with client_of(app) as client:
        resp = await client.post("/login", data={"user": "ops", "password": "ops-pass"})
    assert resp.status_code == 303
    assert "ironsight_session=" in resp.headers["set-cookie"]
