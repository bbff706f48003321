"""Unit tests of `ironsight inspection ...`: arguments -> requests, responses -> output
(an `httpx.MockTransport` backed by a `FakeService`)."""

from __future__ import annotations

import json
from collections.abc import Callable

import click
import httpx
import pytest
from click.testing import CliRunner, Result

from ironsight.cli import inspection
from ironsight.cli.options import Runtime

from ..fakes import FakeService, fake_discoverd

DEADLINES = {"enabled": True, "factor": 3.0, "min_seconds": 30.0, "max_seconds": 600.0,
             "samples": 100, "min_samples": 5, "steps": ["dhcp_request", "hello"],
             "learned_at": "2026-12-06T10:00:00",
             "deadlines": [{"step": "hello", "model": "*", "seconds": 42.5, "p95": 14.2,
                            "samples": 37}]}


@pytest.fixture
def api() -> FakeService:
    return fake_discoverd()


@pytest.fixture
def run(api: FakeService, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    monkeypatch.delenv("IRONSIGHT_DISCOVERD_URL", raising=False)
    group = click.Group("ironsight")
    inspection.register(group)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(group, list(args), obj=Runtime(transport=api.transport))

    return invoke


def test_deadlines_as_json_is_discoverds_answer(run, api):
    api.add("GET", "/v1/deadlines", httpx.Response(200, json=DEADLINES))
    result = run("inspection", "deadlines", "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == DEADLINES
    assert str(api.requests[0].url) == "http://127.0.0.1:5050/v1/deadlines"


def test_deadlines_table_shows_each_step_and_the_settings(run, api):
    api.add("GET", "/v1/deadlines", httpx.Response(200, json=DEADLINES))
    result = run("inspection", "deadlines")
    assert result.exit_code == 0, result.output
    assert "hello" in result.output and "42.5" in result.output and "37" in result.output
    assert "3.0 x p95, within 30.0-600.0 s" in result.output


def test_deadlines_table_says_when_none_is_learned(run, api):
    api.add("GET", "/v1/deadlines", httpx.Response(200, json={**DEADLINES, "deadlines": []}))
    result = run("inspection", "deadlines")
    assert result.exit_code == 0, result.output
    assert "none learned yet" in result.output


BOARD = {"running": 3,
         "steps": [{"step": "loader_fetched", "count": 2, "overdue": 1},
                   {"step": "processing", "count": 1, "overdue": 0}],
         "attempts": [{"uuid": "n1", "state": "waiting", "step": "loader_fetched",
                       "since": "2026-12-07T04:00:00", "quiet_seconds": 612.4,
                       "deadline_seconds": 90.0, "overdue": True}]}


def test_board_asks_for_the_limit_and_prints_the_counts_and_the_quietest(run, api):
    api.add("GET", "/v1/board", httpx.Response(200, json=BOARD))
    result = run("inspection", "board", "--limit", "5")
    assert result.exit_code == 0, result.output
    assert str(api.requests[0].url) == "http://127.0.0.1:5050/v1/board?limit=5"
    assert "n1" in result.output and "612.4" in result.output and "90.0" in result.output
    assert ("3 running: loader_fetched 2 (1 overdue), processing 1"
            in " ".join(result.output.split()))


def test_board_as_json_is_discoverds_answer(run, api):
    api.add("GET", "/v1/board", httpx.Response(200, json=BOARD))
    result = run("inspection", "board", "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == BOARD
