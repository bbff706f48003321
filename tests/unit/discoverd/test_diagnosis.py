"""Failure codes of stalled attempts, named after the furthest phase seen."""

from __future__ import annotations

import datetime as dt

import pytest

from ironsight.discoverd import diagnosis as d

AT = dt.datetime(2026, 12, 6, 10, 2, 13)


def seen(*phases: str) -> list[dict[str, object]]:
    return [{"phase": p, "at": AT + dt.timedelta(seconds=i), "details": None}
            for i, p in enumerate(phases)]


@pytest.mark.parametrize(("phases", "code"), [
    ((d.STARTED,), d.BOOT_NO_DHCP),
    ((d.STARTED, d.POWER_ON_REQUESTED), d.POWER_FAILED),
    ((d.STARTED, d.POWER_ON_REQUESTED, d.POWERED_ON), d.BOOT_NO_DHCP),
    ((d.STARTED, d.DHCP_REQUEST), d.BOOT_NO_DHCP),
    ((d.STARTED, d.DHCP_REQUEST, d.DHCP_LEASE), d.BOOT_NO_LOADER),
    ((d.STARTED, d.DHCP_LEASE, d.LOADER_FETCHED), d.BOOT_NO_SCRIPT),
    ((d.STARTED, d.DHCP_LEASE, d.LOADER_FETCHED, d.SCRIPT_FETCHED), d.BOOT_NO_KERNEL),
    ((d.STARTED, d.SCRIPT_FETCHED, d.KERNEL_FETCHED), d.BOOT_NO_RAMDISK),
    ((d.STARTED, d.KERNEL_FETCHED, d.RAMDISK_FETCHED), d.RAMDISK_NO_HELLO),
    ((d.STARTED, d.RAMDISK_FETCHED, d.HELLO), d.RAMDISK_NO_REPORT),
    ((d.STARTED, d.HELLO, d.REPORT_RECEIVED), d.PROCESSING_FAILED),
])
def test_a_stalled_attempt_is_named_after_the_step_that_never_came(phases, code):
    assert d.stall(seen(*phases))[0] == code


def test_the_phrase_says_when_the_last_step_was_seen_and_what_never_came():
    assert d.stall(seen(d.STARTED, d.DHCP_REQUEST, d.DHCP_LEASE)) == (
        d.BOOT_NO_LOADER,
        "a DHCP lease was given at 10:02:15 but the boot loader was never fetched")


def test_the_furthest_step_counts_not_the_last_one_seen():
    # the ramdisk's own DHCP comes after the kernel and initramfs
    assert d.stall(seen(d.STARTED, d.DHCP_LEASE, d.LOADER_FETCHED, d.SCRIPT_FETCHED,
                        d.KERNEL_FETCHED, d.RAMDISK_FETCHED, d.DHCP_LEASE))[0] == (
        d.RAMDISK_NO_HELLO)


def test_a_virtual_media_boot_without_hello_is_ramdisk_no_hello():
    code, phrase = d.stall(seen(d.STARTED, d.MEDIA_REQUESTED))
    assert code == d.RAMDISK_NO_HELLO
    assert phrase.startswith("the inspection ISO was requested for virtual media at ")


def test_the_ramdisks_own_dhcp_is_not_a_virtual_media_boots_step():
    assert d.stall(seen(d.STARTED, d.MEDIA_REQUESTED, d.DHCP_LEASE))[0] == d.RAMDISK_NO_HELLO


def test_an_attempt_without_its_end_is_running_while_discoverd_works_on_it():
    assert d.result_of(seen(d.STARTED, d.DHCP_LEASE), running=True) == ("running", None)


def test_an_ended_attempt_takes_its_result_and_code_from_its_end():
    end = {"phase": d.FINISHED, "at": AT,
           "details": {"result": "failed", "failure_code": d.RULE_FAILED}}
    phases = [*seen(d.STARTED), end]
    assert d.result_of(phases, running=False) == ("failed", d.RULE_FAILED)
    phases[-1]["details"] = {"result": "success", "failure_code": None}
    assert d.result_of(phases, running=False) == ("success", None)


def test_an_attempt_that_ended_without_its_end_recorded_is_a_stall():
    assert d.result_of(seen(d.STARTED, d.DHCP_LEASE), running=False) == (
        "failed", d.BOOT_NO_LOADER)


def test_every_code_and_phase_is_documented():
    from pathlib import Path
    root = Path(__file__).resolve().parents[3]
    troubleshooting = (root / "docs" / "troubleshooting.md").read_text()
    inspection = (root / "docs" / "inspection.md").read_text()
    assert [c for c in d.CODES if f"`{c}`" not in troubleshooting] == []
    assert [p for p in d.PHASES if f"`{p}`" not in inspection] == []


def test_each_steps_duration_runs_from_the_step_before_it():
    phases = [{"phase": d.STARTED, "at": AT},
              {"phase": d.DHCP_LEASE, "at": AT + dt.timedelta(seconds=2)},
              {"phase": d.POWERED_ON, "at": AT + dt.timedelta(seconds=3)},  # after the DHCP
              {"phase": d.LOADER_FETCHED, "at": AT + dt.timedelta(seconds=4)},
              {"phase": d.DHCP_LEASE, "at": AT + dt.timedelta(seconds=9)}]  # the ramdisk's
    assert d.step_durations(phases) == {d.DHCP_LEASE: 2.0, d.POWERED_ON: 3.0,
                                        d.LOADER_FETCHED: 2.0}


def test_a_virtual_media_boot_stalled_after_its_image_was_ready_says_so():
    code, phrase = d.stall(seen(d.STARTED, d.MEDIA_REQUESTED, d.MEDIA_BUILT))
    assert (code, phrase) == (d.RAMDISK_NO_HELLO, "the node's inspection ISO was ready at "
                              "10:02:15 but the ramdisk never said hello")
