"""Storage of inspection rules (SQL lives here, in discoverd's core, as node_cache.py's:
discoverd/rules is pure) (table `inspection_rules`), and the cached set processing reads.

Both API dialects share one table; each row keeps the `dialect` it was created in, which decides
which API lists and deletes it. Conditions and actions are stored as the internal model
(model.py) in JSON, so processing never re-parses a dialect; an inspector-dialect rule also
keeps the body it was posted with (`original`), which its API shows back.

Processing needs every rule on every ramdisk report. Reading and decoding the whole table each
time costs more than the rules themselves (bench/RESULTS.md, "rules"), so `RuleSet` keeps the
decoded rules and asks the database only for a version stamp (row count and the sum of the
rows' random revisions): one small aggregate statement, which also sees the writes of other
replicas sharing the database.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from ironsight.common.clock import utcnow
from ironsight.common.db import Database
from ironsight.common.exceptions import Conflict, Invalid, NotFound
from ironsight.discoverd.db.models import data
from ironsight.discoverd.db.models import inspection_rules as table
from ironsight.discoverd.rules.model import Action, Condition, Dialect, Rule

# Ironic's list: which fields a client may sort by (not the JSON ones), and the default
# order (Ironic's is its integer id: creation order).
SORT_KEYS = ("uuid", "priority", "phase", "description", "sensitive", "created_at",
             "updated_at")
SORT_DIRS = ("asc", "desc")

_COLUMNS = (table.c.uuid, table.c.dialect, table.c.priority, table.c.description,
            table.c.phase, table.c.sensitive, table.c.scope, table.c.conditions,
            table.c.actions, table.c.original, table.c.created_at, table.c.updated_at)
_ALL = select(*_COLUMNS).order_by(table.c.created_at, table.c.uuid)
_ONE = select(*_COLUMNS).where(table.c.uuid == bindparam("uuid"))
_VERSION = select(func.count(), func.coalesce(func.sum(table.c.revision), 0))


def condition_json(cond: Condition) -> dict[str, Any]:
    return {"op": cond.op, "invert": cond.invert, "args": dict(cond.args), "loop": cond.loop,
            "multiple": cond.multiple}


def action_json(action: Action) -> dict[str, Any]:
    return {"op": action.op, "args": dict(action.args), "loop": action.loop}


def _condition(doc: Mapping[str, Any]) -> Condition:
    return Condition(op=doc["op"], invert=bool(doc.get("invert")), args=dict(doc.get("args")
                     or {}), loop=doc.get("loop"), multiple=doc.get("multiple") or "any")


def _action(doc: Mapping[str, Any]) -> Action:
    return Action(op=doc["op"], args=dict(doc.get("args") or {}), loop=doc.get("loop"))


def rule_from_row(row: Mapping[str, Any]) -> Rule:
    dialect: Dialect = "inspector" if row["dialect"] == "inspector" else "ironic"
    return Rule(uuid=row["uuid"], description=row["description"], priority=row["priority"],
                phase=row["phase"], sensitive=bool(row["sensitive"]),
                conditions=tuple(_condition(c) for c in row["conditions"]),
                actions=tuple(_action(a) for a in row["actions"]), dialect=dialect,
                scope=row["scope"], built_in=False, created_at=row["created_at"],
                updated_at=row["updated_at"], source=row["original"])


def _values(rule: Rule) -> dict[str, Any]:
    return {"revision": secrets.randbelow(2**31 - 1) + 1,
            "dialect": rule.dialect, "priority": rule.priority,
            "description": rule.description, "phase": rule.phase,
            "sensitive": rule.sensitive, "scope": rule.scope,
            "conditions": [condition_json(c) for c in rule.conditions],
            "actions": [action_json(a) for a in rule.actions],
            "original": dict(rule.source) if rule.source is not None else None}


class RuleStore:
    """The rules in discoverd's database. Reads and writes are single statements (each is
    its own transaction): nothing is ever half-written."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, rule: Rule) -> Rule:
        """Store a new rule (timestamps set here); 409 when its UUID is taken."""
        now = utcnow()
        values = {"uuid": rule.uuid, **_values(rule), "created_at": now, "updated_at": None}
        try:
            async with self.db.single() as conn:
                await conn.execute(insert(table), values)
        except IntegrityError:
            raise Conflict(f"An inspection rule with UUID {rule.uuid} already exists.") from None
        return replace(rule, built_in=False, created_at=now, updated_at=None)

    async def get(self, uuid: str, dialect: Dialect | None = None) -> Rule:
        """The rule, or 404 (also when it belongs to the other dialect's API)."""
        async with self.db.read() as conn:
            row = (await conn.execute(_ONE, {"uuid": uuid})).mappings().first()
        if row is None or (dialect is not None and row["dialect"] != dialect):
            raise NotFound(f"Inspection rule {uuid} could not be found.")
        return rule_from_row(row)

    async def list(self, dialect: Dialect | None = None) -> list[Rule]:
        """In creation order (ties by UUID)."""
        query = _ALL if dialect is None else _ALL.where(table.c.dialect == dialect)
        async with self.db.read() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [rule_from_row(r) for r in rows]

    async def replace(self, rule: Rule) -> Rule:
        """Write a changed rule over its row (same UUID and dialect); 404 when it is gone."""
        now = utcnow()
        async with self.db.single() as conn:
            result = await conn.execute(
                update(table).where(table.c.uuid == rule.uuid,
                                    table.c.dialect == rule.dialect)
                .values({**_values(rule), "updated_at": now}))
        if not result.rowcount:
            raise NotFound(f"Inspection rule {rule.uuid} could not be found.")
        return replace(rule, updated_at=now)

    async def delete(self, uuid: str, dialect: Dialect) -> None:
        async with self.db.single() as conn:
            result = await conn.execute(delete(table).where(table.c.uuid == uuid,
                                                            table.c.dialect == dialect))
        if not result.rowcount:
            raise NotFound(f"Inspection rule {uuid} could not be found.")

    async def delete_all(self, dialect: Dialect) -> int:
        async with self.db.single() as conn:
            result = await conn.execute(delete(table).where(table.c.dialect == dialect))
        return int(result.rowcount or 0)

    async def version(self) -> tuple[Any, ...]:
        """A stamp that changes with every write: (rows, sum of the rows' revisions). A delete
        lowers the count; a create or a change draws a new random revision, which moves the
        sum (but for a 1 in 2**31 chance), whatever the clocks of the replicas say."""
        async with self.db.read() as conn:
            row = (await conn.execute(_VERSION)).first()
        return (int(row[0]), int(row[1])) if row is not None else (0, 0)


class RuleSet:
    """Every rule processing applies, in the order it applies them: the stored rules (read
    again only when the version stamp moved) and the built-in ones (`built_in()`: the file's
    current set, itself re-read when the file changes)."""

    def __init__(self, store: RuleStore, built_in: Callable[[], Sequence[Rule]]) -> None:
        self.store = store
        self.built_in = built_in
        self._version: tuple[Any, ...] | None = None
        self._stored: list[Rule] = []

    async def stored(self) -> list[Rule]:
        version = await self.store.version()
        if version != self._version:
            self._stored = await self.store.list()
            self._version = version
        return list(self._stored)

    async def current(self) -> list[Rule]:
        """Priority descending; ties keep creation order, then the built-in file's order (a
        stable sort)."""
        rules = [*await self.stored(), *self.built_in()]
        return sorted(rules, key=lambda r: -r.priority)


# --- the Ironic dialect's list: order and pages ------------------------------------------


def _sort_value(rule: Rule, key: str) -> tuple[int, Any]:
    """Nulls first (as PostgreSQL's DESC... puts them last: a simple, documented choice)."""
    value = getattr(rule, key)
    if value is None:
        return (0, "")
    if isinstance(value, dt.datetime):
        return (1, value.isoformat())
    return (1, value)


def page(rules: Sequence[Rule], *, sort_key: str = "created_at", sort_dir: str = "asc",
         marker: str | None = None, limit: int | None = None) -> tuple[list[Rule], bool]:
    """One page of `rules` (stored and built-in together: rule sets are small, and built-in
    rules live in no table, so the list is ordered here): sorted by `sort_key` then UUID,
    starting after the rule `marker`, at most `limit`; and whether more follow. Built-in
    rules have no creation time and sort before stored ones on it."""
    if sort_key not in SORT_KEYS:
        raise Invalid(f"sort_key: invalid value {sort_key!r} (one of {', '.join(SORT_KEYS)})")
    if sort_dir not in SORT_DIRS:
        raise Invalid(f"sort_dir: invalid value {sort_dir!r} (asc or desc)")
    ordered = sorted(rules, key=lambda r: (_sort_value(r, sort_key), r.uuid),
                     reverse=sort_dir == "desc")
    if marker is not None:
        at = next((i for i, r in enumerate(ordered) if r.uuid == marker), None)
        if at is None:
            raise Invalid(f"marker: inspection rule {marker} could not be found")
        ordered = ordered[at + 1:]
    if limit is not None and len(ordered) > limit:
        return ordered[:limit], True
    return ordered, False


# Enough inventories to know the fleet's shapes; bounded so that a create stays cheap.
SAMPLE = 200


async def recent_inventories(db: Database, limit: int = SAMPLE) -> list[Any]:
    """The inventories of the most recently stored processed data."""
    query = (select(data.c.data).where(data.c.processed.is_(True))
             .order_by(data.c.stored_at.desc()).limit(limit))
    async with db.read() as conn:
        rows = (await conn.execute(query)).scalars().all()
    return [row.get("inventory") for row in rows if isinstance(row, dict)]
