"""Queries on node traits (`bm_node_traits`). Every function takes an open connection."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import bindparam, delete, insert, select

from ironsight.baremetal.db.models import node_traits
from ironsight.common.clock import utcnow
from ironsight.common.db import Conn

# Built once: a statement built per call (the IN list coerced value by value, its cache
# key computed again) cost more than running it; every node GET and PATCH runs this.
_TRAITS_OF = (select(node_traits.c.node_id, node_traits.c.trait)
              .where(node_traits.c.node_id.in_(bindparam("ids", expanding=True)))
              .order_by(node_traits.c.trait))


async def traits_of(conn: Conn, node_ids: Iterable[int]) -> dict[int, list[str]]:
    """Each node's traits, sorted, by node id (nodes without any are left out)."""
    ids = list(node_ids)
    found: dict[int, list[str]] = {}
    if not ids:
        return found
    rows = await conn.execute(_TRAITS_OF, {"ids": ids})
    for node_id, trait in rows:
        found.setdefault(int(node_id), []).append(str(trait))
    return found


async def replace_traits(conn: Conn, node_id: int, traits: Iterable[str]) -> None:
    await conn.execute(delete(node_traits).where(node_traits.c.node_id == node_id))
    now = utcnow()
    rows = [{"node_id": node_id, "trait": t, "created_at": now} for t in sorted(set(traits))]
    if rows:
        await conn.execute(insert(node_traits), rows)
