"""A full database (SQLite's "database or disk is full", for real: the writer connection's
`max_page_count` is capped at the pages the file already has) answers 507 with a clear
message, loses nothing, and the service works again once there is room."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from ironsight.baremetal.service import BaremetalService

from .helpers import create_node, fault


@contextmanager
def full(service: BaremetalService) -> Iterator[None]:
    """The database has no free page left, until the block ends."""
    if service.db.backend != "sqlite":
        pytest.skip("filling a PostgreSQL server's disk is not done in a test")
    # the DB-API connection itself: a PRAGMA opens no transaction there
    writer = service.db._sqlite_conn("_writer").connection.dbapi_connection
    assert writer is not None
    pages = writer.execute("PRAGMA page_count").fetchone()[0]
    writer.execute(f"PRAGMA max_page_count = {pages}")
    try:
        yield
    finally:
        writer.execute("PRAGMA max_page_count = 4294967294")


async def everything(api: httpx.AsyncClient) -> Any:
    return ((await api.get("/v1/nodes/detail")).json()["nodes"],
            (await api.get("/v1/ports/detail")).json()["ports"])


BIG = {"blob": "x" * 200_000}  # more than the free pages of the file


async def test_create_on_a_full_database_is_507_and_creates_nothing(
        api: httpx.AsyncClient, service: BaremetalService) -> None:
    await create_node(api, name="existing")
    before = await everything(api)
    with full(service):
        resp = await api.post("/v1/nodes", json={"driver": "fake", "name": "new", "extra": BIG})
        assert resp.status_code == 507, resp.text
        assert "storage is full; nothing was changed" in fault(resp)
    assert await everything(api) == before


async def test_patch_on_a_full_database_is_507_and_changes_nothing(
        api: httpx.AsyncClient, service: BaremetalService) -> None:
    node = await create_node(api, name="keep")
    before = await everything(api)
    with full(service):
        resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                               json=[{"op": "add", "path": "/extra/blob", "value": BIG["blob"]}])
        assert resp.status_code == 507, resp.text
    assert await everything(api) == before
    # nothing left locked or half-written: the same change goes through once there is room
    resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                           json=[{"op": "add", "path": "/extra/blob", "value": BIG["blob"]}])
    assert resp.status_code == 200, resp.text
