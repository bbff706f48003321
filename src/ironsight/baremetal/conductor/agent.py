"""The ramdisk agent's lookup and heartbeat (Ironic's `/v1/lookup`, `/v1/heartbeat`), with
Ironic 39's agent-token rules, and the guard against handing a token to an impostor.

An agent token is what lets a ramdisk heartbeat (and, in Ironic, be given commands). Ironic
hands it, in clear, to the first `GET /v1/lookup` of a node in a lookup state and to nobody
after ("******"); anyone on the provisioning network who asks first gets it (Ironic bug
2162821). Here a token is handed out only
- to a node that is inspecting or waiting for its ramdisk, or whose inspection ended at most
  `[api] agent_lookup_window` seconds ago (the ramdisk that just reported looks itself up at
  once, as a stock IPA does; Ironic allows this with fast track), and
- once per inspection: the token is bound to the inspection's start, so a later lookup gets
  "******", and a stock IPA that is refused its token this way locks itself down. A stolen
  token is therefore noticed: the real ramdisk stops and says so.
Only the token's SHA-256 digest is stored; the API never shows it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from ironsight.baremetal import states
from ironsight.baremetal.conductor.records import Records
from ironsight.baremetal.db import api as dbapi
from ironsight.baremetal.db.models import ports
from ironsight.common.clock import utcnow
from ironsight.common.exceptions import Invalid, NotFound

TOKEN_KEY = "agent_secret_token"  # the digest, as "sha256:<hex>"; shown as "******"
TOKEN_FOR_KEY = "agent_secret_token_for"  # the start of the inspection it was issued for
MASK = "******"
LOOKUP_STATES = (states.INSPECTING, states.INSPECTWAIT)
LOOKUP_FIELDS = ("uuid", "properties", "instance_info", "driver_internal_info")


def digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


def masked_internal_info(info: dict[str, Any] | None) -> dict[str, Any]:
    shown = dict(info or {})
    if TOKEN_KEY in shown:
        shown[TOKEN_KEY] = MASK
    return shown


def _inspection_key(node: dict[str, Any]) -> str:
    started = node.get("inspection_started_at")
    return started.isoformat() if isinstance(started, dt.datetime) else ""


class AgentRecords:
    """Lookup and heartbeat on the node records (no conductor lock: conditional writes)."""

    def __init__(self, records: Records, lookup_window: float) -> None:
        self.records = records
        self.window = dt.timedelta(seconds=lookup_window)

    async def find(self, node_uuid: str | None, addresses: Iterable[str]) -> dict[str, Any]:
        """The node by UUID, else by its ports' MACs; any failure is one generic 404."""
        try:
            if node_uuid:
                return await self.records.get_node(node_uuid)
            macs = sorted(set(addresses))
            async with self.records.db.read() as conn:
                owners = {r[0] for r in await conn.execute(
                    select(ports.c.node_id).where(ports.c.address.in_(macs)))}
            if len(owners) != 1:
                raise NotFound("no single node")
            async with self.records.db.read() as conn:
                return await dbapi.get_node(conn, await _uuid_of(conn, owners.pop()))
        except NotFound:
            raise NotFound("Resource could not be found.") from None

    def lookup_allowed(self, node: dict[str, Any]) -> bool:
        if node["provision_state"] in LOOKUP_STATES:
            return True
        finished = node.get("inspection_finished_at")
        return (node["provision_state"] == states.MANAGEABLE and finished is not None
                and utcnow() - finished <= self.window)

    async def lookup(self, node: dict[str, Any], with_token: bool) -> tuple[dict[str, Any],
                                                                           str | None]:
        """The node as the agent sees it and its token: a new one if none was issued for
        this inspection, else MASK; None below the token microversion."""
        if not self.lookup_allowed(node):
            raise NotFound("Resource could not be found.")
        if not with_token:
            return node, None
        internal = dict(node.get("driver_internal_info") or {})
        if internal.get(TOKEN_KEY) and internal.get(TOKEN_FOR_KEY) == _inspection_key(node):
            return node, MASK
        token = secrets.token_urlsafe(48)

        def issue(row: dict[str, Any]) -> dict[str, Any]:
            info = dict(row.get("driver_internal_info") or {})
            if info.get(TOKEN_KEY) and info.get(TOKEN_FOR_KEY) == _inspection_key(row):
                raise _AlreadyIssued()
            info.update({TOKEN_KEY: digest(token), TOKEN_FOR_KEY: _inspection_key(row)})
            info.pop("agent_url", None)
            return {**row, "driver_internal_info": info}

        try:
            row = await self.records.update_node_quietly(str(node["uuid"]), issue)
        except _AlreadyIssued:  # another lookup won the race
            return await self.records.get_node(str(node["uuid"])), MASK
        return row, token

    async def heartbeat(self, ident: str, callback_url: str, token: str,
                        agent_version: str) -> None:
        node = await self.records.get_node(ident)
        stored = (node.get("driver_internal_info") or {}).get(TOKEN_KEY)
        if not stored or not hmac.compare_digest(str(stored), digest(token)):
            raise Invalid("Invalid or missing agent token received.")

        def record(row: dict[str, Any]) -> dict[str, Any]:
            info = dict(row.get("driver_internal_info") or {})
            if info.get(TOKEN_KEY) != stored:
                raise Invalid("Invalid or missing agent token received.")
            info.update(agent_url=callback_url, agent_version=agent_version,
                        agent_last_heartbeat=utcnow().isoformat())
            return {**row, "driver_internal_info": info}

        await self.records.update_node_quietly(str(node["uuid"]), record)


class _AlreadyIssued(Exception):
    pass


async def _uuid_of(conn: Any, node_id: int) -> str:
    from ironsight.baremetal.db.models import nodes

    uuid = (await conn.execute(select(nodes.c.uuid).where(nodes.c.id == node_id))).scalar()
    if uuid is None:
        raise NotFound("gone")
    return str(uuid)
