"""How the python-ironicclient suite's harness (tests/compat/ironicclient_suite.py) configures
the shipped tests and judges a run against its record of known failures."""

from __future__ import annotations

import configparser
from pathlib import Path

from ...compat import ironicclient_suite
from ...compat.ironicclient_suite import SUITE_SIZE, problems, suite_config
from ...compat.sdk_suite import Outcome, Service, SuiteRun

SERVICE = Service("http://127.0.0.1:4242", "http://127.0.0.1:4343", Path("/nowhere/log"))


def run(count: int = SUITE_SIZE, **statuses: str) -> SuiteRun:
    outcomes = {f"test_node.T.test_{i}": Outcome("passed") for i in range(count - len(statuses))}
    outcomes.update({f"test_node.T.{name}": Outcome(status, "why")
                     for name, status in statuses.items()})
    return SuiteRun(outcomes, 1.0, Path("/nowhere"))


def test_the_suites_config_names_no_keystone_and_our_api() -> None:
    conf = configparser.ConfigParser()
    conf.read_string(suite_config(SERVICE))
    assert dict(conf["functional"]) == {"api_version": "1", "auth_strategy": "noauth",
                                        "ironic_url": SERVICE.url}


def test_a_whole_run_as_recorded_has_no_problems() -> None:
    assert problems(run(test_b="failed"), {"test_node.T.test_b": "404"}) == []


def test_a_run_of_another_size_is_a_problem() -> None:
    assert problems(run(SUITE_SIZE - 1), {}) == [
        f"the suite ran {SUITE_SIZE - 1} tests, not {SUITE_SIZE}"]


def test_a_failure_not_recorded_is_a_problem() -> None:
    assert problems(run(test_b="error"), {}) == ["test_node.T.test_b: error: why"]


def test_a_recorded_failure_that_passes_is_a_problem() -> None:
    found = problems(run(), {"test_node.T.test_0": "404"})
    assert found == ["test_node.T.test_0: passes now: remove it from KNOWN_FAILURES"]


def test_every_known_failure_says_why() -> None:
    assert all(why.strip() for why in ironicclient_suite.KNOWN_FAILURES.values())
