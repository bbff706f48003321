"""The console's gate in front of its pages, with a stand-in for the database of ended
sessions (the database itself: tests/unit/baremetal/db/test_console_sessions.py; a logout
through a running service: tests/functional/console/test_pages.py)."""

from __future__ import annotations

from pathlib import Path

import httpx

from ironsight.baremetal.console.app import create_console
from ironsight.baremetal.console.pages import Console
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


async def test_a_database_outage_is_a_503_page_not_a_crash_or_a_pass(tmp_path: Path) -> None:
    (tmp_path / "htpasswd").write_text("")
    conf = config.load(overrides={"DEFAULT": {
        "state_dir": str(tmp_path), "auth_strategy": "http_basic",
        "http_basic_auth_user_file": str(tmp_path / "htpasswd")}})
    app = create_console(conf, no_api, DiscoverdProxy(conf), Unreachable())
    console: Console = app.state.console
    cookie = console.sessions.encode(console.sessions.new(Identity("ops", Role.MEMBER)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://127.0.0.1") as client:
        resp = await client.get("/nodes", cookies={"ironsight_session": cookie})
    assert resp.status_code == 503
    assert "database is unavailable" in resp.text
