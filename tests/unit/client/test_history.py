"""A node's history with its inspection steps among its events (client/history.py)."""

from __future__ import annotations

import datetime as dt

from ironsight.client.history import utc, with_steps


def test_steps_and_events_are_ordered_by_time_whatever_their_offsets() -> None:
    events = [{"uuid": "e1", "created_at": "2026-12-06T10:00:00+00:00", "event": "inspect"},
              {"uuid": "e2", "created_at": "2026-12-06T11:00:05+01:00", "event": "done"}]
    attempts = [{"attempt": 2, "failure_code": None, "phases": [
        {"phase": "hello", "at": "2026-12-06T10:00:03", "source": "ramdisk", "macs": None}]}]
    found = with_steps(events, attempts)
    assert [e["event"] for e in found] == ["inspect", "Inspection attempt 2: hello (ramdisk)",
                                           "done"]
    assert found[1]["uuid"] is None and found[1]["severity"] == "INFO"


def test_a_time_that_does_not_parse_sorts_first() -> None:
    assert utc("not a time") == dt.datetime.min
