"""Storage of inspection rules: each API sees its own dialect's rules, nothing is half
written, and the cached set processing reads follows every write."""

from __future__ import annotations

import datetime as dt

import pytest

from ironsight.common.db import Database
from ironsight.common.exceptions import Conflict, Invalid, NotFound
from ironsight.discoverd import rule_store
from ironsight.discoverd.rule_store import RuleSet, RuleStore, page
from ironsight.discoverd.rules.model import Action, Condition, Rule


@pytest.fixture
def store(db_each: Database) -> RuleStore:
    """The storage runs SQL: its specifications hold on each backend."""
    return RuleStore(db_each)


U1 = "aaaaaaaa-0000-4000-8000-000000000001"
U2 = "aaaaaaaa-0000-4000-8000-000000000002"
U3 = "aaaaaaaa-0000-4000-8000-000000000003"


def rule(uuid: str = U1, *, priority: int = 0, dialect: str = "ironic", **kw: object) -> Rule:
    return Rule(uuid=uuid, description=f"rule {uuid[-1]}", priority=priority,
                conditions=(Condition("eq", invert=True, args={"values": [1, 2]},
                                      loop=[1, 2], multiple="all"),),
                actions=(Action("add-trait", {"name": "CUSTOM_X"}),),
                dialect=dialect, **kw)  # type: ignore[arg-type]


async def test_a_stored_rule_reads_back_as_it_was_given(store: RuleStore) -> None:
    source = {"description": "d", "conditions": [], "actions": [{"action": "fail"}]}
    created = await store.create(rule(dialect="inspector", scope="rack1", source=source,
                                      sensitive=True))
    found = await store.get(U1)
    assert found == created
    assert (found.conditions, found.actions) == (rule().conditions, rule().actions)
    assert (found.scope, found.source, found.sensitive) == ("rack1", source, True)
    assert isinstance(found.created_at, dt.datetime) and found.updated_at is None


async def test_a_taken_uuid_is_a_conflict(store: RuleStore) -> None:
    await store.create(rule())
    with pytest.raises(Conflict):
        await store.create(rule(dialect="inspector"))
    assert len(await store.list()) == 1


async def test_each_dialect_sees_only_its_own_rules(store: RuleStore) -> None:
    await store.create(rule(U1))
    await store.create(rule(U2, dialect="inspector"))
    assert [r.uuid for r in await store.list("ironic")] == [U1]
    assert [r.uuid for r in await store.list("inspector")] == [U2]
    with pytest.raises(NotFound):
        await store.get(U2, "ironic")
    with pytest.raises(NotFound):
        await store.delete(U2, "ironic")


async def test_delete_all_deletes_only_its_dialect(store: RuleStore) -> None:
    await store.create(rule(U1))
    await store.create(rule(U2, dialect="inspector"))
    await store.create(rule(U3, dialect="inspector"))
    assert await store.delete_all("inspector") == 2
    assert [r.uuid for r in await store.list()] == [U1]


async def test_replace_changes_the_rule_and_its_update_time(store: RuleStore) -> None:
    created = await store.create(rule())
    changed = await store.replace(rule(priority=7, created_at=created.created_at))
    found = await store.get(U1)
    assert found.priority == 7 and found.updated_at is not None
    assert found.updated_at == changed.updated_at
    assert found.created_at == created.created_at


async def test_replacing_a_deleted_rule_is_not_found(store: RuleStore) -> None:
    with pytest.raises(NotFound):
        await store.replace(rule())


async def test_the_version_moves_with_every_write(store: RuleStore) -> None:
    seen = {await store.version()}
    await store.create(rule(U1))
    seen.add(await store.version())
    await store.create(rule(U2))
    seen.add(await store.version())
    await store.replace(rule(U1, priority=3))
    seen.add(await store.version())
    await store.delete(U2, "ironic")
    seen.add(await store.version())
    assert len(seen) == 5


async def test_the_version_moves_even_when_a_writers_clock_is_behind(
        store: RuleStore, monkeypatch: pytest.MonkeyPatch) -> None:
    await store.create(rule(U1))
    await store.create(rule(U2))
    await store.replace(rule(U2, priority=2))
    before = await store.version()
    monkeypatch.setattr(rule_store, "utcnow", lambda: dt.datetime(2000, 1, 1))
    await store.replace(rule(U1, priority=5))  # another replica, its clock years behind
    assert await store.version() != before


async def test_the_rule_set_follows_writes_and_orders_by_priority(store: RuleStore) -> None:
    built_in = [rule("00000000-0000-0000-0000-000000000000", priority=5, built_in=True)]
    rules = RuleSet(store, lambda: built_in)
    await store.create(rule(U1, priority=1))
    assert [r.uuid for r in await rules.current()] == [built_in[0].uuid, U1]
    await store.create(rule(U2, priority=9))
    await store.create(rule(U3, priority=1, dialect="inspector"))
    assert [r.uuid for r in await rules.current()] == [U2, built_in[0].uuid, U1, U3]
    await store.delete(U2, "ironic")
    assert [r.uuid for r in await rules.current()] == [built_in[0].uuid, U1, U3]


async def test_the_rule_set_reads_the_table_only_when_it_changed(
        store: RuleStore, monkeypatch: pytest.MonkeyPatch) -> None:
    await store.create(rule())
    rules = RuleSet(store, list)
    await rules.current()
    reads: list[None] = []
    real = store.list

    async def counted(dialect: object = None) -> list[Rule]:
        reads.append(None)
        return await real()

    monkeypatch.setattr(store, "list", counted)
    await rules.current()
    await rules.current()
    assert reads == []
    await store.create(rule(U2))
    assert len(await rules.current()) == 2 and len(reads) == 1


def test_pages_follow_the_sort_key_and_the_marker() -> None:
    rules = [rule(U1, priority=5), rule(U2, priority=1), rule(U3, priority=3)]
    first, more = page(rules, sort_key="priority", sort_dir="desc", limit=2)
    assert [r.uuid for r in first] == [U1, U3] and more
    rest, more = page(rules, sort_key="priority", sort_dir="desc", limit=2, marker=U3)
    assert [r.uuid for r in rest] == [U2] and not more


@pytest.mark.parametrize(("options", "field"), [
    ({"sort_key": "actions"}, "sort_key"), ({"sort_dir": "up"}, "sort_dir"),
    ({"marker": U3}, "marker")])
def test_bad_list_options_name_the_option(options: dict[str, str], field: str) -> None:
    with pytest.raises(Invalid, match=field):
        page([rule(U1)], **options)  # type: ignore[arg-type]
