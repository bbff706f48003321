"""A node write and its history row in one statement, for PostgreSQL.

Most writes of the bare-metal service come with a history row (a state change, a power
action, a new port). As two statements in a transaction they cost four round trips (BEGIN,
the write, the history INSERT, COMMIT); as one statement, a data-modifying CTE whose
RETURNING feeds the history INSERT, they cost one, and are as atomic (a statement commits
whole or not at all). SQLite has no data-modifying CTEs: there, db/api.py runs the two
statements in one transaction instead (both are local calls).

Each statement is built once per set of columns, with bound parameters: `_v_*` the node's
(or port's) values, `_h_*` the history row's.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import bindparam, insert, select, update

from ironsight.baremetal.db.models import history, nodes, ports

HISTORY_COLUMNS = ("uuid", "node_id", "created_at", "severity", "event_type", "event",
                   "conductor")


def history_params(row: dict[str, Any]) -> dict[str, Any]:
    return {f"_h_{key}": row[key] for key in HISTORY_COLUMNS if key != "node_id"}


def _with_history(cte: Any, node_id: Any, *returning: Any) -> Any:
    """INSERT a history row for the node id `cte` gives; RETURNING it (no row: nothing
    was written)."""
    row = select(*[node_id if key == "node_id"
                   else bindparam(f"_h_{key}", type_=history.c[key].type)
                   for key in HISTORY_COLUMNS]).select_from(cte)
    return (insert(history).from_select(list(HISTORY_COLUMNS), row).add_cte(cte)
            .returning(history.c.node_id, *returning))


@functools.lru_cache(maxsize=256)
def update_locked_node(keys: tuple[str, ...], free: bool = False) -> Any:
    """UPDATE the node `_row_id` only while `_owner` holds its lock of `_epoch` (`free`: only
    while nobody holds it and it is still at `_epoch`), and add its history row."""
    held = (nodes.c.reservation.is_(None) if free
            else nodes.c.reservation == bindparam("_owner"))
    changed = (update(nodes)
               .where(nodes.c.id == bindparam("_row_id"), held,
                      nodes.c.lock_epoch == bindparam("_epoch"))
               .values({key: bindparam(f"_v_{key}") for key in keys})
               .returning(nodes.c.id).cte("changed"))
    return _with_history(changed, changed.c.id)


@functools.lru_cache(maxsize=64)
def insert_node(keys: tuple[str, ...]) -> Any:
    """INSERT the node and its history row; RETURNING the new node's id."""
    new = (insert(nodes).values({key: bindparam(f"_v_{key}") for key in keys})
           .returning(nodes.c.id).cte("new_node"))
    return _with_history(new, new.c.id)


@functools.lru_cache(maxsize=64)
def insert_port(keys: tuple[str, ...], node_key: str) -> Any:
    """INSERT a port on the node whose `node_key` (uuid or name) is `_node`, and its
    history row; RETURNING the node's id and the port's (no row: no such node)."""
    node = select(nodes.c.id).where(nodes.c[node_key] == bindparam("_node")).cte("node")
    columns = [*keys, "node_id"]
    values = select(*[bindparam(f"_v_{key}", type_=ports.c[key].type) for key in keys],
                    node.c.id).select_from(node)
    new = (insert(ports).from_select(columns, values).add_cte(node)
           .returning(ports.c.id, ports.c.node_id).cte("new_port"))
    return _with_history(new, new.c.node_id, select(new.c.id).scalar_subquery())
