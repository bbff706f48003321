"""Unit tests of `ironsight introspection ...`: arguments -> requests, responses -> output.

The CLI talks to an `httpx.MockTransport` backed by a `FakeService`, which records requests
and answers from per-route queues; `--wait` polls a fake clock so no test sleeps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import click
import httpx
import pytest
from click.testing import CliRunner, Result

from ironsight.cli import introspection
from ironsight.cli.options import Runtime

from ..fakes import FakeClock, FakeService, fake_discoverd, inspector_error

UUID1 = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
UUID2 = "5f8d1c2e-8a1b-4b34-9a1d-2f3c4d5e6f70"
BASE = "http://127.0.0.1:5050"


def status(uuid: str = UUID1, state: str = "waiting", error: str | None = None
           ) -> dict[str, Any]:
    return {"uuid": uuid, "state": state, "finished": state in ("finished", "error"),
            "error": error, "started_at": "2025-01-01T00:00:00", "finished_at": None,
            "links": [{"rel": "self", "href": f"{BASE}/v1/introspection/{uuid}"}]}


def listing(*statuses: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json={"introspection": list(statuses)})


def query(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


@pytest.fixture
def api() -> FakeService:
    return fake_discoverd()


@pytest.fixture
def run(api: FakeService, clock: FakeClock,
        monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    monkeypatch.delenv("IRONSIGHT_DISCOVERD_URL", raising=False)
    group = click.Group("ironsight")
    introspection.register(group)

    def invoke(*args: str, transport: httpx.BaseTransport | None = None,
               env: dict[str, str] | None = None, input: str | None = None) -> Result:
        runtime = Runtime(
            transport=transport or api.transport,
            sleep=clock.sleep, clock=clock, poll_interval=2.0,
        )
        return CliRunner().invoke(group, list(args), obj=runtime, env=env, input=input)

    return invoke


# --- connection settings --------------------------------------------------------------------


def test_default_url_and_version_header(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}", httpx.Response(200, json=status()))
    result = run("introspection", "status", UUID1)
    assert result.exit_code == 0, result.output
    request = api.requests[0]
    assert str(request.url) == f"{BASE}/v1/introspection/{UUID1}"
    assert request.headers["X-OpenStack-Ironic-Inspector-API-Version"] == "1.18"


def test_url_from_the_environment_and_from_the_command(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}", httpx.Response(200, json=status()))
    run("introspection", "status", UUID1, env={"IRONSIGHT_DISCOVERD_URL": "http://d:7/"})
    run("introspection", "--url", "http://group:1", "status", UUID1, "--url", "http://cmd:2/v1")
    assert [r.url.host for r in api.requests] == ["d", "cmd"]


def test_timeout_option(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}", httpx.Response(200, json=status()))
    run("introspection", "status", UUID1, "--timeout", "4")
    assert api.requests[0].extensions["timeout"]["read"] == 4.0


# --- errors ---------------------------------------------------------------------------------


def test_discoverd_error_prints_its_message_and_exits_1(run, api):
    api.add("GET", "/v1/introspection/nope",
            inspector_error(404, "Could not find node nope in cache"))
    result = run("introspection", "status", "nope")
    assert result.exit_code == 1
    assert result.stderr == "Error: Could not find node nope in cache (HTTP 404)\n"
    assert result.stdout == ""


def test_unreachable_discoverd_names_the_url_and_exits_1(run):
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    result = run("introspection", "list", "--url", "http://127.0.0.1:9",
                 transport=httpx.MockTransport(refuse))
    assert result.exit_code == 1
    assert "cannot reach discoverd at http://127.0.0.1:9/v1" in result.stderr


# --- start ----------------------------------------------------------------------------------


def test_start_posts_each_node_quietly(run, api):
    api.accept("POST", f"/v1/introspection/{UUID1}")
    api.accept("POST", "/v1/introspection/node-2")
    result = run("introspection", "start", UUID1, "node-2")
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert [r.url.path for r in api.requests] == [
        f"/v1/introspection/{UUID1}", "/v1/introspection/node-2"]
    assert all(query(r) == {} for r in api.requests)


@pytest.mark.parametrize(("flag", "sent"), [("--no-manage-boot", "false"),
                                            ("--manage-boot", "true")])
def test_start_manage_boot(run, api, flag, sent):
    api.accept("POST", f"/v1/introspection/{UUID1}")
    run("introspection", "start", UUID1, flag)
    assert query(api.requests[0]) == {"manage_boot": sent}


def test_start_carries_on_past_a_refused_node_then_exits_1(run, api):
    api.add("POST", "/v1/introspection/bad", inspector_error(400, "Invalid provision state"))
    api.accept("POST", f"/v1/introspection/{UUID1}")
    result = run("introspection", "start", "bad", UUID1)
    assert result.exit_code == 1
    assert "Error: Invalid provision state (HTTP 400)" in result.stderr
    assert len(api.sent("POST", f"/v1/introspection/{UUID1}")) == 1


def test_start_wait_polls_in_one_batched_request_and_prints_state_changes(run, api, clock):
    api.accept("POST", f"/v1/introspection/{UUID1}")
    api.accept("POST", f"/v1/introspection/{UUID2}")
    api.add("GET", "/v1/introspection",
            listing(status(UUID1, "waiting"), status(UUID2, "waiting")),
            listing(status(UUID1, "processing"), status(UUID2, "waiting")),
            listing(status(UUID1, "finished"), status(UUID2, "finished")))
    result = run("introspection", "start", UUID1, UUID2, "--wait", "60", "-f", "json")
    assert result.exit_code == 0, result.output
    polls = api.sent("GET", "/v1/introspection")
    assert [query(r)["uuid"] for r in polls] == [f"{UUID1},{UUID2}"] * 3
    assert result.stderr.splitlines() == [
        f"node {UUID1}: introspection waiting", f"node {UUID2}: introspection waiting",
        f"node {UUID1}: introspection processing",
        f"node {UUID1}: introspection finished", f"node {UUID2}: introspection finished",
    ]
    assert [s["state"] for s in json.loads(result.stdout)] == ["finished", "finished"]
    assert clock.sleeps == [2.0, 2.0]


def test_start_wait_stops_polling_finished_nodes(run, api):
    api.accept("POST", f"/v1/introspection/{UUID1}")
    api.accept("POST", f"/v1/introspection/{UUID2}")
    api.add("GET", "/v1/introspection",
            listing(status(UUID1, "finished"), status(UUID2, "waiting")),
            listing(status(UUID2, "finished")))
    result = run("introspection", "start", UUID1, UUID2, "--wait", "0")
    assert result.exit_code == 0, result.output
    polls = api.sent("GET", "/v1/introspection")
    assert [query(r)["uuid"] for r in polls] == [f"{UUID1},{UUID2}", UUID2]
    assert UUID1 in result.stdout and UUID2 in result.stdout  # the result table


def test_start_wait_resolves_names_once_then_polls_by_uuid(run, api):
    api.accept("POST", "/v1/introspection/node-1")
    api.add("GET", "/v1/introspection/node-1", httpx.Response(200, json=status(UUID1)))
    api.add("GET", "/v1/introspection", listing(status(UUID1, "finished")))
    result = run("introspection", "start", "node-1", "--wait", "10")
    assert result.exit_code == 0, result.output
    assert len(api.sent("GET", "/v1/introspection/node-1")) == 1
    assert query(api.sent("GET", "/v1/introspection")[0]) == {"uuid": UUID1}
    assert "node node-1: introspection finished" in result.stderr


def test_start_wait_exits_1_and_prints_the_error_of_a_failed_node(run, api):
    api.accept("POST", f"/v1/introspection/{UUID1}")
    api.accept("POST", f"/v1/introspection/{UUID2}")
    api.add("GET", "/v1/introspection",
            listing(status(UUID1, "error", error="Introspection timeout"),
                    status(UUID2, "finished")))
    result = run("introspection", "start", UUID1, UUID2, "--wait", "10")
    assert result.exit_code == 1
    assert (f"Error: introspection of node {UUID1} failed: Introspection timeout"
            in result.stderr)
    assert UUID2 not in result.stderr.split("Error:")[-1]


def test_start_wait_times_out(run, api, clock):
    api.accept("POST", f"/v1/introspection/{UUID1}")
    api.add("GET", "/v1/introspection", listing(status(UUID1, "waiting")))
    result = run("introspection", "start", UUID1, "--wait", "5")
    assert result.exit_code == 1
    assert (f"Error: timed out after 5 s waiting for introspection of node {UUID1} "
            "(state waiting)") in result.stderr
    assert clock.sleeps == [2.0, 2.0, 1.0]
    assert result.stderr.count("introspection waiting") == 1  # one line per change


def test_start_wait_fails_for_a_node_discoverd_forgot(run, api):
    api.accept("POST", f"/v1/introspection/{UUID1}")
    api.add("GET", "/v1/introspection", listing())
    result = run("introspection", "start", UUID1, "--wait", "5")
    assert result.exit_code == 1
    assert f"discoverd has no introspection of node {UUID1}" in result.stderr


def test_start_wait_only_waits_for_nodes_that_started(run, api):
    api.add("POST", "/v1/introspection/bad", inspector_error(404, "Node bad not found"))
    api.accept("POST", f"/v1/introspection/{UUID1}")
    api.add("GET", "/v1/introspection", listing(status(UUID1, "finished")))
    result = run("introspection", "start", "bad", UUID1, "--wait", "5")
    assert result.exit_code == 1
    assert query(api.sent("GET", "/v1/introspection")[0]) == {"uuid": UUID1}


# --- status, list ---------------------------------------------------------------------------


def test_status_table_and_json(run, api):
    body = status(UUID1, "error", error="Canceled by operator")
    api.add("GET", f"/v1/introspection/{UUID1}", httpx.Response(200, json=body))
    table = run("introspection", "status", UUID1)
    assert table.exit_code == 0, table.output
    assert "Canceled by operator" in table.stdout and "links" not in table.stdout
    as_json = run("introspection", "status", UUID1, "-f", "json")
    assert json.loads(as_json.stdout) == body


def test_list_passes_filters_and_prints_a_table(run, api):
    api.add("GET", "/v1/introspection", listing(status(UUID1, "error", error="boom")))
    result = run("introspection", "list", "--state", "error", "--state", "waiting",
                 "--limit", "5")
    assert result.exit_code == 0, result.output
    assert query(api.requests[0]) == {"state": "error,waiting", "limit": "5"}
    for text in ("UUID", "State", "Error", UUID1, "boom"):
        assert text in result.stdout


def test_list_without_limit_follows_pages(run, api):
    api.add("GET", "/v1/introspection",
            httpx.Response(200, json={"introspection": [status(UUID1)],
                                      "next": f"{BASE}/v1/introspection?marker={UUID1}"}),
            listing(status(UUID2)))
    result = run("introspection", "list", "-f", "json")
    assert [s["uuid"] for s in json.loads(result.stdout)] == [UUID1, UUID2]
    assert query(api.requests[1]) == {"marker": UUID1}


def test_list_rejects_an_unknown_state(run, api):
    result = run("introspection", "list", "--state", "bogus")
    assert result.exit_code == 2
    assert api.requests == []


# --- abort, data, reapply -------------------------------------------------------------------


def test_abort(run, api):
    api.accept("POST", f"/v1/introspection/{UUID1}/abort")
    result = run("introspection", "abort", UUID1)
    assert result.exit_code == 0, result.output
    assert len(api.sent("POST", f"/v1/introspection/{UUID1}/abort")) == 1


def test_abort_refused_exits_1(run, api):
    api.add("POST", f"/v1/introspection/{UUID1}/abort", inspector_error(409, "Node is locked"))
    result = run("introspection", "abort", UUID1)
    assert result.exit_code == 1
    assert "Error: Node is locked (HTTP 409)" in result.stderr


@pytest.mark.parametrize(("args", "path"), [
    ((), f"/v1/introspection/{UUID1}/data"),
    (("--raw",), f"/v1/introspection/{UUID1}/data/unprocessed"),
])
def test_data_prints_json(run, api, args, path):
    data = {"inventory": {"memory": {"physical_mb": 4096}}}
    api.add("GET", path, httpx.Response(200, json=data))
    result = run("introspection", "data", UUID1, *args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == data


def test_reapply_without_data(run, api):
    path = f"/v1/introspection/{UUID1}/data/unprocessed"
    api.accept("POST", path)
    result = run("introspection", "reapply", UUID1)
    assert result.exit_code == 0, result.output
    assert api.sent("POST", path)[0].content == b""


def test_reapply_with_data_from_a_file_and_stdin(run, api, tmp_path: Path):
    path = f"/v1/introspection/{UUID1}/data/unprocessed"
    api.accept("POST", path)
    data_file = tmp_path / "data.json"
    data_file.write_text('{"inventory": {"cpu": {"count": 2}}}')
    assert run("introspection", "reapply", UUID1, "--data", str(data_file)).exit_code == 0
    assert run("introspection", "reapply", UUID1, "--data", "-", input='{"a": 1}').exit_code == 0
    bodies = [json.loads(r.content) for r in api.sent("POST", path)]
    assert bodies == [{"inventory": {"cpu": {"count": 2}}}, {"a": 1}]


@pytest.mark.parametrize("content", ["not json", "[1, 2]"])
def test_reapply_rejects_bad_data_as_a_usage_error(run, api, tmp_path: Path, content):
    data_file = tmp_path / "data.json"
    data_file.write_text(content)
    result = run("introspection", "reapply", UUID1, "--data", str(data_file))
    assert result.exit_code == 2
    assert "--data" in result.stderr
    assert api.requests == []


def test_members_shows_each_replica_and_which_serves_pxe(run, api):
    api.add("GET", "/v1/members", httpx.Response(200, json={"members": [
        {"name": "a:1", "hostname": "a", "pid": 1, "alive": True,
         "started_at": "2026-12-01T10:00:00", "heartbeat_at": "2026-12-01T10:05:00",
         "pxe": {"network": "prov-a", "since": "2026-12-01T10:00:01"}},
        {"name": "b:2", "hostname": "b", "pid": 2, "alive": False,
         "started_at": "2026-12-01T09:00:00", "heartbeat_at": "2026-12-01T09:01:00",
         "pxe": None}]}))
    result = run("introspection", "members")
    assert result.exit_code == 0, result.output
    for text in ("Replica", "a:1", "True", "prov-a", "2026-12-01T10:00:01", "b:2", "False"):
        assert text in result.stdout


# --- data history and diff --------------------------------------------------------------------


def test_data_options_may_come_before_the_node(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}/data/unprocessed", httpx.Response(200, json={}))
    result = run("introspection", "data", "--raw", UUID1)
    assert result.exit_code == 0, result.output


def test_data_of_one_stored_introspection(run, api):
    path = f"/v1/introspection/{UUID1}/data/history/2/unprocessed"
    api.add("GET", path, httpx.Response(200, json={"run": 2}))
    result = run("introspection", "data", UUID1, "--id", "2", "--raw")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"run": 2}


def history(*ids: int) -> httpx.Response:
    return httpx.Response(200, json={"uuid": UUID1, "history": [
        {"id": i, "started_at": f"2025-01-0{i}T00:00:00", "received_at": None,
         "processed_at": None, "links": []} for i in ids]})


def cpus(count: int) -> httpx.Response:
    return httpx.Response(200, json={"inventory": {"cpu": {"count": count}}})


def memory(mb: int) -> httpx.Response:
    return httpx.Response(200, json={"inventory": {"memory": {"physical_mb": mb}}})


def test_history_lists_the_kept_introspections(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}/data/history", history(3, 2))
    result = run("introspection", "data", "history", UUID1)
    assert result.exit_code == 0, result.output
    assert "2025-01-03T00:00:00" in result.stdout and "2025-01-02T00:00:00" in result.stdout


def test_diff_compares_the_latest_with_the_previous_by_default(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}/data/history", history(3, 2, 1))
    api.add("GET", f"/v1/introspection/{UUID1}/data/history/2", cpus(8))
    api.add("GET", f"/v1/introspection/{UUID1}/data/history/3", cpus(4))
    result = run("introspection", "data", "diff", UUID1, "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [
        {"component": "cpu", "key": "x8", "change": "changed", "severity": "critical",
         "before": {"count": 8}, "after": {"count": 4}, "fields": ["count"],
         "message": "cpu x8: count 8 -> 4", "counts": None}]
    assert "Introspection 2 (started 2025-01-02T00:00:00) -> 3" in result.stderr


def test_diff_table_starts_with_the_summary_lines(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}/data/history", history(3, 2, 1))
    api.add("GET", f"/v1/introspection/{UUID1}/data/history/2", memory(65536))
    api.add("GET", f"/v1/introspection/{UUID1}/data/history/3", memory(32768))
    result = run("introspection", "data", "diff", UUID1)
    assert result.exit_code == 0, result.output
    first, *rest = result.stdout.splitlines()
    assert first == "memory 65536 → 32768 MiB, \u221232 GiB"
    table = "\n".join(rest)
    for text in ("Severity", "critical", "memory", "changed", "65536 MiB -> 32768 MiB"):
        assert text in table
    assert "1 hardware change(s)" in result.stderr


def test_diff_to_one_run_compares_with_the_run_before_it(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}/data/history", history(3, 2, 1))
    api.add("GET", f"/v1/introspection/{UUID1}/data/history/1", cpus(8))
    api.add("GET", f"/v1/introspection/{UUID1}/data/history/2", cpus(8))
    result = run("introspection", "data", "diff", UUID1, "--to", "2")
    assert result.exit_code == 0, result.output
    assert "no hardware change" in result.stderr
    assert result.stdout == ""


def test_diff_of_a_run_not_kept_is_a_usage_error(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}/data/history", history(3, 2))
    result = run("introspection", "data", "diff", UUID1, "--from", "1")
    assert result.exit_code == 2
    assert "has no stored introspection 1 (kept: 3, 2)" in result.stderr


def test_diff_needs_two_stored_introspections(run, api):
    api.add("GET", f"/v1/introspection/{UUID1}/data/history", history(1))
    result = run("introspection", "data", "diff", UUID1)
    assert result.exit_code == 2
    assert "no stored introspection before 1" in result.stderr
