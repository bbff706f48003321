"""The conductor's start record (start_record.py): one key of driver_internal_info."""

from __future__ import annotations

from ironsight.baremetal.conductor.start_record import KEY, StartRecord, record, updated


def test_a_node_without_a_record_has_the_defaults() -> None:
    assert record(None) == record({"other": 1}) == StartRecord()


def test_an_update_keeps_the_rest_of_driver_internal_info_and_the_other_fields() -> None:
    internal = updated({"other": 1}, starts=2, lost="no answer")
    assert internal == {"other": 1, KEY: {"starts": 2, "lost": "no answer",
                                          "interrupted": False, "abort_pending": False}}
    assert record(updated(internal, abort_pending=True)) == StartRecord(
        starts=2, lost="no answer", abort_pending=True)


def test_an_earlier_releases_keys_are_read_and_dropped_at_the_next_write() -> None:
    legacy = {"discoverd_starts": 3, "discoverd_start_lost": "gone",
              "discoverd_start_interrupted": True, "discoverd_abort_pending": True, "x": 0}
    assert record(legacy) == StartRecord(starts=3, lost="gone", interrupted=True,
                                         abort_pending=True)
    assert set(updated(legacy, lost=None)) == {"x", KEY}
