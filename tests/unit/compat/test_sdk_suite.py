"""How the openstacksdk suite's harness (tests/compat/sdk_suite.py) judges a run against its
record of known failures, and reads pytest's junit XML."""

from __future__ import annotations

from pathlib import Path

from ...compat.sdk_suite import Outcome, SuiteRun, fixed, parse_junit, stale, unexpected, why

KNOWN = {"test_node.T.test_b": "404 on /v1/chassis"}


def run(**statuses: str) -> SuiteRun:
    return SuiteRun({f"test_node.T.{name}": Outcome(status) for name, status in statuses.items()},
                    1.0, Path("/nowhere"))


def test_a_failure_not_recorded_is_unexpected() -> None:
    assert list(unexpected(run(test_a="failed", test_b="failed"), KNOWN)) == ["test_node.T.test_a"]


def test_a_recorded_failure_is_expected() -> None:
    assert unexpected(run(test_a="passed", test_b="failed"), KNOWN) == {}


def test_a_skip_not_recorded_is_unexpected() -> None:
    assert list(unexpected(run(test_a="skipped", test_b="error"), KNOWN)) == ["test_node.T.test_a"]


def test_a_recorded_failure_that_passes_is_reported_fixed() -> None:
    assert fixed(run(test_a="passed", test_b="passed"), KNOWN) == ["test_node.T.test_b"]


def test_a_recorded_failure_missing_from_the_suite_is_stale() -> None:
    assert stale(run(test_a="passed"), KNOWN) == ["test_node.T.test_b"]


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="v1.test_node.TestNode" name="test_ok" file="a/v1/test_node.py" time="0.5"/>
<testcase classname="v1.test_node.TestNode" name="test_bad" file="a/v1/test_node.py" time="1">
<failure message="Failed: NOTE: Incompatible Exception Representation">'NoneType' object
testtools.testresult.real._StringException: Traceback (most recent call last):
  File "x.py", line 1, in setUp
    raise cls(
openstack.exceptions.NotFoundException: 404: Client Error for url: http://127.0.0.1:4242/v1/x
</failure></testcase>
<testcase classname="v1.test_port.TestPort" name="test_skip" file="a/v1/test_port.py">
<skipped message="Service baremetal not found"/></testcase>
</testsuite></testsuites>"""


def test_junit_cases_are_named_module_class_test(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").write_text(JUNIT)
    assert sorted(parse_junit(tmp_path / "junit.xml")) == [
        "test_node.TestNode.test_bad", "test_node.TestNode.test_ok", "test_port.TestPort.test_skip"]


def test_junit_outcomes_keep_status_and_reason(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").write_text(JUNIT)
    outcomes = parse_junit(tmp_path / "junit.xml")
    assert outcomes["test_node.TestNode.test_ok"] == Outcome("passed", "", 0.5)
    assert outcomes["test_node.TestNode.test_bad"] == Outcome(
        "failed", "openstack.exceptions.NotFoundException: 404: Client Error for url: /v1/x", 1)
    assert outcomes["test_port.TestPort.test_skip"].status == "skipped"
    assert outcomes["test_port.TestPort.test_skip"].message == "Service baremetal not found"


def test_the_reason_is_the_exception_after_the_last_traceback_without_the_port() -> None:
    report = ("boom\nTraceback (most recent call last):\n  File 'x'\nValueError: first\n"
              "During handling\nX: Traceback (most recent call last):\n  File 'y'\n"
              "    code\nopenstack.exceptions.HttpException: 400: url: http://127.0.0.1:6385/v1/n")
    assert why(report, "") == "openstack.exceptions.HttpException: 400: url: /v1/n"


def test_the_reason_without_a_traceback_is_the_summary() -> None:
    assert why("", "Service baremetal not found\nmore") == "Service baremetal not found"
