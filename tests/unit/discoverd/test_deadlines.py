"""Phase deadlines (deadlines.py): learned from successful attempts' step durations, per
hardware model where known, and the step a running attempt waits for."""

from __future__ import annotations

import datetime as dt

import pytest

from ironsight.common.config import ConfigError, DeadlinesSection, load
from ironsight.discoverd import diagnosis
from ironsight.discoverd.deadlines import FLEET, Deadline, Deadlines, model_of, p95, waiting_for

T0 = dt.datetime(2026, 12, 6, 10, 0, 0)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def steps(*pairs: tuple[str, float]) -> list[dict[str, object]]:
    return [{"phase": phase, "at": at(s)} for phase, s in pairs]


def deadlines(**conf: object) -> Deadlines:
    return Deadlines(DeadlinesSection(**conf), db=None)  # type: ignore[arg-type]


def test_p95_is_the_nearest_rank() -> None:
    assert p95([float(n) for n in range(1, 101)]) == 95.0
    assert p95([3.0, 1.0, 2.0]) == 3.0
    assert p95([7.0]) == 7.0


def test_the_model_is_vendor_and_product_from_the_inventory() -> None:
    assert model_of({"system_vendor": {"manufacturer": "Dell Inc.",
                                       "product_name": "PowerEdge R650"}}) == (
        "Dell Inc. PowerEdge R650")
    assert model_of({"system_vendor": {"product_name": "Standard PC"}}) == "Standard PC"
    assert model_of({"system_vendor": {}}) is None
    assert model_of({}) is None


def test_a_deadline_is_the_p95_times_the_factor() -> None:
    learned = deadlines(factor=3.0, min_seconds=1, min_samples=5).learn_from(
        [(None, {"loader_fetched": float(s)}) for s in (1, 2, 2, 3, 4)])
    assert learned["loader_fetched", FLEET] == Deadline("loader_fetched", FLEET, 12.0, 4.0, 5)


def test_a_deadline_stays_within_the_bounds() -> None:
    found = deadlines(factor=3.0, min_seconds=30, max_seconds=100, min_samples=1)
    short = found.learn_from([(None, {"dhcp_lease": 1.0})])["dhcp_lease", FLEET]
    long = found.learn_from([(None, {"hello": 60.0})])["hello", FLEET]
    assert (short.seconds, long.seconds) == (30.0, 100.0)


def test_a_step_with_too_few_samples_has_no_deadline() -> None:
    found = deadlines(min_samples=3)
    assert found.learn_from([(None, {"hello": 5.0})] * 2) == {}


def test_only_the_configured_steps_get_deadlines() -> None:
    found = deadlines(min_samples=1, steps=["hello"])
    learned = found.learn_from([(None, {"hello": 5.0, "dhcp_lease": 1.0,
                                        "processing_done": 2.0})])
    assert list(learned) == [("hello", FLEET)]


def test_a_model_with_enough_samples_gets_its_own_deadline_others_the_fleets() -> None:
    found = deadlines(factor=2.0, min_seconds=1, min_samples=3)
    found.learned = found.learn_from(
        [("Big Iron", {"hello": 40.0})] * 3 + [("Small", {"hello": 5.0})] * 2)
    assert found.deadline("hello", "Big Iron") == Deadline("hello", "Big Iron", 80.0, 40.0, 3)
    assert found.deadline("hello", "Small").model == FLEET  # type: ignore[union-attr]
    assert found.deadline("hello", None).samples == 5  # type: ignore[union-attr]
    assert found.deadline("kernel_fetched", None) is None


@pytest.mark.parametrize(("seen", "step", "since"), [
    ([("started", 0), ("power_on_requested", 1), ("powered_on", 3)], "dhcp_request", 1),
    ([("power_on_requested", 1), ("powered_on", 3), ("dhcp_request", 4)], "dhcp_lease", 4),
    ([("power_on_requested", 1), ("dhcp_request", 4), ("dhcp_lease", 5)], "loader_fetched", 5),
    ([("dhcp_lease", 5), ("loader_fetched", 6)], "script_fetched", 6),
    ([("loader_fetched", 6), ("script_fetched", 7)], "kernel_fetched", 7),
    ([("script_fetched", 7), ("kernel_fetched", 9)], "ramdisk_fetched", 9),
    ([("kernel_fetched", 9), ("ramdisk_fetched", 10)], "hello", 10),
    ([("ramdisk_fetched", 10), ("hello", 20)], "report_received", 20),
])
def test_a_pxe_boot_waits_for_the_step_after_the_furthest_reached(
        seen: list[tuple[str, float]], step: str, since: float) -> None:
    found = waiting_for(steps(*seen))
    assert found is not None and (found.step, found.since) == (step, at(since))


def test_the_power_on_confirmation_does_not_restart_the_clock() -> None:
    # the node's DHCP may come before the conductor saw the power on carried out
    found = waiting_for(steps(("power_on_requested", 1), ("dhcp_request", 4),
                              ("powered_on", 6)))
    assert found is not None and (found.step, found.since) == ("dhcp_lease", at(4))


def test_virtual_media_waits_for_the_hello_once_the_node_is_on() -> None:
    found = waiting_for(steps(("started", 0), ("media_inserted", 1),
                              ("power_on_requested", 2), ("powered_on", 3),
                              ("dhcp_request", 8)))  # the ramdisk's own DHCP
    assert found is not None and (found.step, found.since) == ("hello", at(8))


@pytest.mark.parametrize("seen", [
    [("started", 0)],  # not booting yet: the power actions have their own limits
    [("started", 0), ("media_inserted", 1)],
    [("hello", 20), ("report_received", 30)],  # processing: discoverd's own work
])
def test_no_boot_step_is_waited_for_before_the_power_on_or_after_the_report(
        seen: list[tuple[str, float]]) -> None:
    assert waiting_for(steps(*seen)) is None


def test_the_message_names_the_step_the_wait_and_the_numbers() -> None:
    found = deadlines(factor=3.0, min_seconds=30, max_seconds=600)
    wait = waiting_for(steps(("dhcp_lease", 5)))
    assert wait is not None
    text = found.message(wait, Deadline("loader_fetched", FLEET, 30.0, 1.2, 20),
                         "a DHCP lease was given at 10:00:05 but the boot loader was never "
                         "fetched", at(50))
    assert text == ("a DHCP lease was given at 10:00:05 but the boot loader was never fetched "
                    "(waited 45 s for loader_fetched; its deadline is 30 s: 3 x the p95 1.2 s "
                    "of 20 of this fleet's successful attempts, within 30-600 s)")


def test_the_steps_option_names_only_known_steps(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "c.conf"
    path.write_text("[deadlines]\nsteps = hello,boot_done\n")
    with pytest.raises(ConfigError, match=r"\[deadlines\] steps.*'boot_done'"):
        load(path)


def test_min_seconds_above_max_seconds_is_refused() -> None:
    with pytest.raises(ConfigError, match="min_seconds"):
        load(None, {"deadlines": {"min_seconds": "2000"}})


def test_every_deadline_step_is_a_phase() -> None:
    assert set(DeadlinesSection().steps) <= set(diagnosis.PHASES)
