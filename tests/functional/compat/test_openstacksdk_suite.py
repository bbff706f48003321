"""openstacksdk's own bare-metal functional tests (4.22.0, as shipped in its wheel) against a
live `ironsight serve`, run once per session by the harness of tests/compat: every test of the
suite passes except those recorded in its KNOWN_FAILURES, and none of those passes unnoticed
(the record only shrinks). The suite's venv is created by `make test`
(scripts/ensure-sdk-suite.sh)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ...compat import sdk_suite
from ...compat.sdk_suite import SUITE_SIZE, SuiteRun

VENV = Path(os.environ.get("IRONSIGHT_TEST_SDK_SUITE_VENV")
            or sdk_suite.ROOT / ".state" / "sdk-suite-venv")


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    if not (VENV / "bin" / "python").exists():
        pytest.skip(f"no openstacksdk suite venv at {VENV}: `make test` creates it "
                    "(scripts/ensure-sdk-suite.sh .state), or set IRONSIGHT_TEST_SDK_SUITE_VENV")
    workdir = tmp_path_factory.mktemp("sdk-suite")
    with sdk_suite.serving(workdir) as service:
        return sdk_suite.run_suite(VENV, service, workdir)


def test_the_whole_suite_runs(suite_run: SuiteRun) -> None:
    assert len(suite_run.outcomes) == SUITE_SIZE, suite_run.workdir


def test_every_test_passes_but_the_known_failures(suite_run: SuiteRun) -> None:
    found = sdk_suite.unexpected(suite_run)
    assert not found, "\n".join(
        [f"not passed, not in KNOWN_FAILURES (files: {suite_run.workdir}):"]
        + [f"{t}: {o.status}: {o.message}" for t, o in found.items()])


def test_no_known_failure_passes(suite_run: SuiteRun) -> None:
    assert sdk_suite.fixed(suite_run) == [], "these pass now: remove them from KNOWN_FAILURES"


def test_every_known_failure_is_a_test_of_the_suite(suite_run: SuiteRun) -> None:
    assert sdk_suite.stale(suite_run) == []

