"""Rows of the bare-metal database as the conductor tests set them up and read them."""

from __future__ import annotations

from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.db import api as dbapi
from ironsight.common.db import Database

OWNER = "conductor-a:100"
OTHER = "conductor-b:200"


async def make_node(db: Database, state: str = states.MANAGEABLE, *, driver: str = "fake",
                    **values: Any) -> str:
    async with db.begin() as conn:
        row = await dbapi.create_node(conn, {
            "driver": driver, "provision_state": state, "power_state": states.POWER_OFF,
            "provision_updated_at": dbapi.utcnow(), **values})
    return str(row["uuid"])


async def node(db: Database, uuid: str) -> dict[str, Any]:
    async with db.read() as conn:
        return await dbapi.get_node(conn, uuid)


async def history(db: Database, uuid: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        return await dbapi.list_history(conn, (await dbapi.get_node(conn, uuid))["id"])
