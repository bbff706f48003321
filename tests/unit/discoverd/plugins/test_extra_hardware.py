"""`extra-hardware`: the report's `data` records as nested mappings in `extra`."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.plugins.base import ProcessingContext
from ironsight.discoverd.plugins.extra_hardware import (
    ExtraHardwareHook,
    ExtraHardwareInspector,
)
from ironsight.discoverd.plugins.facts import EXTRA_HARDWARE

from ..helpers import agent_report, context, unvalidated

RECORDS = [["cpu", "logical", "number", "16"], ["cpu", "physical_0", "vendor", "Intel"],
           ["memory", "total", "size", "68719476736"], ["disk", "sda", "rotational", "0"]]


def run(data: Any, *, strict: bool = False, missing: bool = False, validated: bool = True,
        hook: type[ExtraHardwareHook] = ExtraHardwareHook) -> ProcessingContext:
    """The hook on a report with `data`; `validated=False` for data formats.py refuses
    (records not 4 items long, data not a list), which the hook handles as upstream."""
    report = agent_report() if missing else agent_report(data=data)
    mode = str(strict).lower()
    ctx = context(report, processing={"extra_hardware_strict": mode}) if validated \
        else unvalidated(report, extra_hardware_strict=mode)
    hook(ctx.conf).before_update(ctx)
    return ctx


def test_provides_extra_hardware() -> None:
    assert ExtraHardwareHook.provides == (EXTRA_HARDWARE,)


def test_records_become_nested_mappings_with_whole_numbers_as_numbers() -> None:
    assert run(RECORDS).processed_data()["extra"] == {
        "cpu": {"logical": {"number": 16}, "physical_0": {"vendor": "Intel"}},
        "memory": {"total": {"size": 68719476736}}, "disk": {"sda": {"rotational": 0}}}


def test_the_raw_data_is_dropped_from_the_processed_data() -> None:
    assert "data" not in run(RECORDS).processed_data()


def test_no_data_changes_nothing() -> None:
    ctx = run(None, missing=True)
    assert not ctx.has(EXTRA_HARDWARE)
    assert "extra" not in ctx.processed_data()


def test_a_record_whose_names_are_not_text_is_skipped_with_a_warning() -> None:
    ctx = run([[1, "logical", "number", "2"], *RECORDS])
    assert ctx.processed_data()["extra"]["cpu"]["logical"] == {"number": 16}
    assert ctx.changes.warnings == ["extra hardware record [1, 'logical', 'number', '2'] "
                                    "skipped: not [category, item, property, value]"]


def test_an_unvalidated_short_record_is_skipped_with_a_warning() -> None:
    ctx = run([["cpu", "logical"], *RECORDS], validated=False)
    assert ctx.processed_data()["extra"]["cpu"]["logical"] == {"number": 16}
    assert ctx.changes.warnings == ["extra hardware record ['cpu', 'logical'] skipped: not "
                                    "[category, item, property, value]"]


def test_unvalidated_data_that_is_not_a_list_of_lists_is_kept_raw_with_a_warning() -> None:
    ctx = run({"cpu": 1}, validated=False)
    assert ctx.processed_data()["data"] == {"cpu": 1}
    assert "extra" not in ctx.processed_data()
    assert len(ctx.changes.warnings) == 1


def test_strict_mode_refuses_unvalidated_data_with_a_short_record_and_drops_it() -> None:
    ctx = run([["cpu", "logical"], *RECORDS], strict=True, validated=False)
    processed = ctx.processed_data()
    assert "extra" not in processed and "data" not in processed
    assert ctx.changes.warnings == ["extra hardware data is not a list of [category, item, "
                                    "property, value] records; not converted and dropped "
                                    "(strict)"]


def test_strict_mode_converts_well_formed_data() -> None:
    assert run(RECORDS, strict=True).processed_data()["extra"]["cpu"]["logical"] == \
        {"number": 16}


def test_inspector_era_name_does_the_same() -> None:
    assert ExtraHardwareInspector.name == "extra_hardware"
    assert run(RECORDS, hook=ExtraHardwareInspector).processed_data()["extra"]["disk"] == \
        {"sda": {"rotational": 0}}
