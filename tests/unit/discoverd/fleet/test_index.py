"""fleet/index.py's parts: the sharing of repeated values between documents (documents read
the same after it, and what repeats is one object), and the stamps kept up to date by asking
only for what changed."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from ironsight.discoverd.fleet.index import LOOKBACK, Seen, _Interner

DOC = {"uuid": "u1", "inventory": {"cpu": {"flags": ["fpu", "vme", "sse"]},
                                   "pci_devices": [{"bus": "0000:00:01.0", "class": "060400"},
                                                   {"bus": "0000:03:00.0", "class": "030000"}],
                                   "disks": [{"name": "/dev/sda", "serial": "S1"}]},
       "traits": [], "hardware": {"nics": [{"mac": "52:54:00:00:00:01", "speed": 1000}]}}


def test_a_document_reads_the_same_after_sharing() -> None:
    assert _Interner()(copy.deepcopy(DOC)) == DOC


def test_flat_records_and_scalar_lists_that_repeat_are_one_object() -> None:
    intern = _Interner()
    first, second = intern(copy.deepcopy(DOC)), intern(copy.deepcopy(DOC))
    assert first["inventory"]["cpu"]["flags"] is second["inventory"]["cpu"]["flags"]
    assert first["inventory"]["pci_devices"][1] is second["inventory"]["pci_devices"][1]


def test_records_that_differ_are_not_shared() -> None:
    intern = _Interner()
    other = copy.deepcopy(DOC)
    other["inventory"]["disks"][0]["serial"] = "S2"
    first, second = intern(copy.deepcopy(DOC)), intern(other)
    assert first["inventory"]["disks"][0]["serial"] == "S1"
    assert second["inventory"]["disks"][0]["serial"] == "S2"


def test_true_and_one_are_not_taken_for_each_other() -> None:
    intern = _Interner()
    one, true = intern({"a": [1]}), intern({"a": [True]})
    assert true["a"][0] is True and one["a"][0] == 1 and one["a"][0] is not True


class Source:
    """A side's rows as the fetch sees them; records what it was asked."""

    def __init__(self, rows: dict[str, str], now: str = "2026-12-01 12:00:00") -> None:
        self.rows = rows
        self.now = now
        self.asked: list[str | None] = []

    async def fetch(self, since: str | None) -> tuple[list[Any], int, str | None]:
        self.asked.append(since)
        chosen = [(k, v) for k, v in self.rows.items() if since is None or v >= since]
        return chosen, len(self.rows), self.now


async def test_the_first_update_asks_for_everything() -> None:
    source = Source({"a": "2026-12-01 10:00:00", "b": "2026-12-01 11:00:00"})
    assert await Seen().update(source.fetch) == source.rows
    assert source.asked == [None]


async def test_later_updates_ask_only_for_changes_since_the_last_read_less_the_lookback(
        ) -> None:
    source = Source({"a": "2026-12-01 10:00:00", "b": "2026-12-01 11:00:00"})
    seen = Seen()
    await seen.update(source.fetch)
    source.rows["a"], source.now = "2026-12-01 12:00:30", "2026-12-01 12:01:00"
    assert await seen.update(source.fetch) == source.rows
    assert source.asked[1] == (dt.datetime(2026, 12, 1, 12) - LOOKBACK).isoformat(sep=" ")


async def test_a_row_gone_makes_the_next_update_ask_for_everything() -> None:
    source = Source({"a": "2026-12-01 10:00:00", "b": "2026-12-01 11:00:00"})
    seen = Seen()
    await seen.update(source.fetch)
    del source.rows["a"]
    assert await seen.update(source.fetch) == {"b": "2026-12-01 11:00:00"}
    assert source.asked[-1] is None
