"""Unit tests of the one wait loop (`client/wait.py`) and its users: bare-metal nodes settling
and discoverd introspections finishing.

Every wait runs on a fake clock: the services move on (the next scripted answer) only when
the wait sleeps, so a test reads as "the service says this, then that; the wait concludes".
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from ironsight.client.http import ApiClient, ApiError, baremetal_client
from ironsight.client.wait import (
    BATCH_FROM,
    IntrospectionWatch,
    NodeWatch,
    Poller,
    Verdict,
    poll,
    until,
    wait_for_introspection,
    wait_for_nodes,
)
from ironsight.discoverd.client import Client as DiscoverdClient

from ..fakes import FakeClock, fake_baremetal, fake_discoverd

MANAGE = NodeWatch.provision("manageable")


def uuid_of(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_OID, name))


def node(name: str, state: str, target: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"uuid": uuid_of(name), "name": name, "provision_state": state,
            "target_provision_state": target, "power_state": "power off",
            "target_power_state": None, "last_error": None, **fields}


def query(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


class Fleet:
    """A bare-metal API whose nodes move on at each sleep of the wait: each node shows the
    next of its scripted documents (the last one stays)."""

    def __init__(self, clock: FakeClock, **scripts: list[dict[str, Any]]) -> None:
        self.clock = clock
        self.scripts = scripts
        self.polls = 0
        self.service = fake_baremetal()
        self.service.add("GET", "/v1/nodes", self._list)
        self.service.add("GET", "/v1/nodes/detail", self._list)
        for name in scripts:
            self.service.add("GET", f"/v1/nodes/{name}", self._show(name))

    def sleep(self, seconds: float) -> None:
        self.clock.sleep(seconds)
        self.polls += 1

    @property
    def poller(self) -> Poller:
        return Poller(interval=2.0, clock=self.clock, sleep=self.sleep)

    def doc(self, name: str) -> dict[str, Any]:
        script = self.scripts[name]
        return script[min(self.polls, len(script) - 1)]

    def _show(self, name: str) -> Callable[[httpx.Request], httpx.Response]:
        return lambda request: httpx.Response(200, json=self.doc(name))

    def _list(self, request: httpx.Request) -> httpx.Response:
        params = query(request)
        docs = [self.doc(name) for name in self.scripts]
        if "marker" in params:
            docs = docs[[d["uuid"] for d in docs].index(params["marker"]) + 1:]
        limit = int(params.get("limit", 1000))
        page = docs[:limit]
        if "fields" in params:
            page = [{k: d[k] for k in params["fields"].split(",")} for d in page]
        body: dict[str, Any] = {"nodes": page}
        if len(docs) > limit:
            body["next"] = f"http://public.example/v1/nodes?limit={limit}&marker={page[-1]['uuid']}"
        return httpx.Response(200, json=body)

    def api(self) -> ApiClient:
        return baremetal_client(transport=self.service.transport)

    def gets(self) -> list[str]:
        return [r.url.path for r in self.service.sent("GET")]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


# --- the loop ----------------------------------------------------------------------------------


def test_until_returns_at_once_when_already_done(clock):
    assert until(lambda: True, 10, Poller(clock=clock, sleep=clock.sleep))
    assert clock.sleeps == []


def test_until_sleeps_the_interval_between_polls(clock):
    answers = iter([False, False, True])
    assert until(lambda: next(answers), 60, Poller(interval=2.0, clock=clock, sleep=clock.sleep))
    assert clock.sleeps == [2.0, 2.0]


def test_until_polls_one_last_time_on_the_deadline_then_gives_up(clock):
    polls: list[float] = []

    def never() -> bool:
        polls.append(clock.now)
        return False

    assert not until(never, 5, Poller(interval=2.0, clock=clock, sleep=clock.sleep))
    assert clock.sleeps == [2.0, 2.0, 1.0]
    assert polls == [0.0, 2.0, 4.0, 5.0]


def test_until_with_timeout_zero_has_no_limit(clock):
    answers = iter([False] * 1000 + [True])
    assert until(lambda: next(answers), 0, Poller(interval=2.0, clock=clock, sleep=clock.sleep))
    assert len(clock.sleeps) == 1000


class Countdown:
    """A condition on integers: 0 is reached, a negative number failed, else waiting."""

    def verdict(self, observed: int) -> Verdict:
        if observed == 0:
            return Verdict.REACHED
        return Verdict.FAILED if observed < 0 else Verdict.WAITING

    def progress(self, key: str, observed: int) -> str:
        return f"{key}: {observed}"

    def failure(self, key: str, observed: int) -> str:
        return f"{key} failed at {observed}"

    def timed_out(self, key: str, observed: int, timeout: float) -> str:
        return f"{key} still at {observed} after {timeout:g} s"


class Script:
    """A fetch answering the n-th scripted value of each key at its n-th call."""

    def __init__(self, **values: list[int]) -> None:
        self.values = values
        self.calls: list[list[str]] = []

    def __call__(self, keys: Sequence[str]) -> dict[str, int]:
        self.calls.append(list(keys))
        n = len(self.calls) - 1
        return {k: self.values[k][min(n, len(self.values[k]) - 1)] for k in keys}


def test_poll_fetches_the_pending_keys_at_once_and_drops_those_that_ended(clock):
    fetch = Script(a=[1, 0], b=[2, 1, 0])
    outcome = poll(["a", "b"], fetch, Countdown(), 60, Poller(clock=clock, sleep=clock.sleep))
    assert fetch.calls == [["a", "b"], ["a", "b"], ["b"]]
    assert outcome.reached == ["a", "b"]
    assert outcome.failures == []


def test_poll_reports_a_progress_line_only_when_it_changes(clock):
    lines: list[str] = []
    poll(["a"], Script(a=[2, 2, 1, 1, 0]), Countdown(), 60,
         Poller(clock=clock, sleep=clock.sleep), lines.append)
    assert lines == ["a: 2", "a: 1", "a: 0"]


def test_poll_lists_failures_as_they_happen_then_the_timed_out_keys(clock):
    fetch = Script(a=[1, 1, -1], b=[-1], c=[1])
    outcome = poll(["a", "b", "c"], fetch, Countdown(), 5,
                   Poller(interval=2.0, clock=clock, sleep=clock.sleep))
    assert outcome.failed == ["b", "a"]
    assert outcome.timed_out == ["c"]
    assert outcome.failures == ["b failed at -1", "a failed at -1", "c still at 1 after 5 s"]


def test_poll_can_stop_at_the_first_failure(clock):
    fetch = Script(a=[-1], b=[1])
    outcome = poll(["a", "b"], fetch, Countdown(), 60, Poller(clock=clock, sleep=clock.sleep),
                   stop_on_failure=True)
    assert outcome.failed == ["a"]
    assert outcome.timed_out == []
    assert clock.sleeps == []


# --- bare-metal nodes --------------------------------------------------------------------------


def test_node_wait_settles_once_the_target_field_is_empty(clock):
    fleet = Fleet(clock, n1=[node("n1", "verifying", "manageable"), node("n1", "manageable")])
    with fleet.api() as api:
        outcome = wait_for_nodes(api, ["n1"], MANAGE, 60, fleet.poller)
    assert outcome.reached == ["n1"]
    assert outcome.failures == []
    assert outcome.last["n1"]["provision_state"] == "manageable"


def test_node_wait_reports_a_failure_with_the_nodes_last_error(clock):
    fleet = Fleet(clock, n1=[node("n1", "verifying", "manageable"),
                             node("n1", "enroll", last_error="Missing ipmi_address")])
    with fleet.api() as api:
        outcome = wait_for_nodes(api, ["n1"], MANAGE, 60, fleet.poller)
    assert outcome.failures == [
        "node n1 ended in provision state 'enroll': Missing ipmi_address"]


def test_node_wait_failure_without_last_error_says_none_was_reported(clock):
    fleet = Fleet(clock, n1=[node("n1", "enroll")])
    with fleet.api() as api:
        outcome = wait_for_nodes(api, ["n1"], MANAGE, 60, fleet.poller)
    assert outcome.failures == ["node n1 ended in provision state 'enroll': no error reported"]


def test_node_wait_times_out_naming_the_node_and_where_it_is(clock):
    fleet = Fleet(clock, n1=[node("n1", "verifying", "manageable")])
    with fleet.api() as api:
        outcome = wait_for_nodes(api, ["n1"], MANAGE, 5, fleet.poller)
    assert outcome.timed_out == ["n1"]
    assert outcome.failures == [
        "timed out after 5 s waiting for node n1 to reach 'manageable' "
        "(provision state verifying, target manageable)"]
    assert clock.sleeps == [2.0, 2.0, 1.0]


def test_node_wait_prints_a_progress_line_on_each_change_of_state_or_target(clock):
    fleet = Fleet(clock, n1=[node("n1", "verifying", "manageable"),
                             node("n1", "verifying", "manageable", last_error="retrying"),
                             node("n1", "manageable")])
    lines: list[str] = []
    with fleet.api() as api:
        wait_for_nodes(api, ["n1"], MANAGE, 60, fleet.poller, lines.append)
    assert lines == ["node n1: provision state verifying (target manageable)",
                     "node n1: provision state manageable"]


def test_node_wait_timeout_zero_means_no_limit(clock):
    fleet = Fleet(clock, n1=[node("n1", "verifying", "manageable")] * 500
                  + [node("n1", "manageable")])
    with fleet.api() as api:
        outcome = wait_for_nodes(api, ["n1"], MANAGE, 0, fleet.poller)
    assert outcome.reached == ["n1"]
    assert len(clock.sleeps) == 500


def test_node_wait_on_a_few_nodes_reads_each_with_one_get(clock):
    fleet = Fleet(clock, a=[node("a", "verifying", "manageable"), node("a", "manageable")],
                  b=[node("b", "manageable")])
    with fleet.api() as api:
        wait_for_nodes(api, ["a", "b"], MANAGE, 60, fleet.poller)
    assert fleet.gets() == ["/v1/nodes/a", "/v1/nodes/b", "/v1/nodes/a"]


def test_node_wait_on_many_nodes_reads_one_list_page_per_poll(clock):
    names = [f"n{i}" for i in range(BATCH_FROM * 5)]
    fleet = Fleet(clock, **{n: [node(n, "verifying", "manageable"), node(n, "manageable")]
                            for n in names})
    with fleet.api() as api:
        outcome = wait_for_nodes(api, names, MANAGE, 60, fleet.poller)
    assert outcome.reached == names
    assert fleet.gets() == ["/v1/nodes", "/v1/nodes"]
    assert query(fleet.service.requests[0]) == {
        "limit": "1000",
        "fields": "uuid,name,provision_state,target_provision_state,last_error"}


def test_batched_node_wait_matches_nodes_by_uuid_as_well_as_by_name(clock):
    names = [f"n{i}" for i in range(BATCH_FROM)]
    fleet = Fleet(clock, **{n: [node(n, "manageable")] for n in names})
    idents = [uuid_of(n) for n in names[:5]] + names[5:]
    with fleet.api() as api:
        outcome = wait_for_nodes(api, idents, MANAGE, 60, fleet.poller)
    assert outcome.reached == idents
    assert fleet.gets() == ["/v1/nodes"]


def test_batched_node_wait_follows_next_pages_and_stops_once_all_are_found(clock):
    names = [f"n{i}" for i in range(2500)]
    fleet = Fleet(clock, **{n: [node(n, "manageable")] for n in names})
    with fleet.api() as api:
        wait_for_nodes(api, names[:1500], MANAGE, 60, fleet.poller)
    assert fleet.gets() == ["/v1/nodes", "/v1/nodes"]
    second = fleet.service.requests[1]
    assert second.url.host == "127.0.0.1"
    assert query(second)["marker"] == uuid_of("n999")


def test_batched_node_wait_asks_by_get_for_a_node_the_list_lacks(clock):
    names = [f"n{i}" for i in range(BATCH_FROM)]
    fleet = Fleet(clock, **{n: [node(n, "manageable")] for n in names})
    with fleet.api() as api, pytest.raises(ApiError, match="No route GET /v1/nodes/ghost"):
        wait_for_nodes(api, [*names, "ghost"], MANAGE, 60, fleet.poller)
    assert fleet.gets() == ["/v1/nodes", "/v1/nodes/ghost"]


def test_batched_node_wait_can_be_asked_for_a_few_nodes(clock):
    fleet = Fleet(clock, a=[node("a", "manageable")])
    with fleet.api() as api:
        wait_for_nodes(api, ["a"], MANAGE, 60, fleet.poller, batched=True)
    assert fleet.gets() == ["/v1/nodes"]


def test_node_wait_for_whole_documents_reads_the_detailed_list(clock):
    names = [f"n{i}" for i in range(BATCH_FROM)]
    fleet = Fleet(clock, **{n: [node(n, "manageable", properties={"cpus": 2})] for n in names})
    watch = NodeWatch.provision("manageable", fields=None)
    with fleet.api() as api:
        outcome = wait_for_nodes(api, names, watch, 60, fleet.poller)
    assert fleet.gets() == ["/v1/nodes/detail"]
    assert outcome.last["n0"]["properties"] == {"cpus": 2}


def test_node_wait_with_failed_states_waits_through_other_settled_states(clock):
    fleet = Fleet(clock, n1=[node("n1", "manageable"), node("n1", "inspect failed")])
    watch = NodeWatch.provision("inspect failed", failed_states=frozenset({"enroll"}))
    with fleet.api() as api:
        outcome = wait_for_nodes(api, ["n1"], watch, 60, fleet.poller)
    assert outcome.reached == ["n1"]
    assert clock.sleeps == [2.0]


def test_node_wait_reached_only_once_settled_holds_too(clock):
    fleet = Fleet(clock, n1=[node("n1", "manageable", power_state="power on"),
                             node("n1", "manageable", power_state="power off")])
    watch = NodeWatch.provision("manageable", settled=lambda d: d["power_state"] == "power off",
                                fields=("power_state",))
    with fleet.api() as api:
        outcome = wait_for_nodes(api, ["n1"], watch, 60, fleet.poller)
    assert outcome.reached == ["n1"]
    assert clock.sleeps == [2.0]


def test_power_watch_waits_on_the_power_fields(clock):
    fleet = Fleet(clock, n1=[node("n1", "manageable", target_power_state="power on"),
                             node("n1", "manageable", power_state="power on")])
    lines: list[str] = []
    with fleet.api() as api:
        outcome = wait_for_nodes(api, ["n1"], NodeWatch.power("power on"), 60, fleet.poller,
                                 lines.append)
    assert outcome.reached == ["n1"]
    assert lines == ["node n1: power state power off (target power on)",
                     "node n1: power state power on"]


# --- discoverd introspections ------------------------------------------------------------------


def status(name: str, state: str, error: str | None = None) -> dict[str, Any]:
    return {"uuid": uuid_of(name), "state": state, "error": error,
            "finished": state in ("finished", "error")}


class Discoverd:
    """discoverd's batched status (`GET /v1/introspection?uuid=...`), moving on at each sleep
    (None in a script: discoverd does not know the node at that poll)."""

    def __init__(self, clock: FakeClock, **scripts: list[dict[str, Any] | None]) -> None:
        self.clock = clock
        self.by_uuid = {uuid_of(name): script for name, script in scripts.items()}
        self.polls = 0
        self.service = fake_discoverd()
        self.service.add("GET", "/v1/introspection", self._statuses)

    def sleep(self, seconds: float) -> None:
        self.clock.sleep(seconds)
        self.polls += 1

    @property
    def poller(self) -> Poller:
        return Poller(interval=2.0, clock=self.clock, sleep=self.sleep)

    def _statuses(self, request: httpx.Request) -> httpx.Response:
        asked = query(request)["uuid"].split(",")
        found = [script[min(self.polls, len(script) - 1)]
                 for uuid_, script in self.by_uuid.items() if uuid_ in asked]
        return httpx.Response(200, json={"introspection": [s for s in found if s is not None]})

    def api(self) -> DiscoverdClient:
        return DiscoverdClient(transport=self.service.transport)


def test_introspection_wait_ends_when_every_node_is_finished(clock):
    di = Discoverd(clock, a=[status("a", "waiting"), status("a", "finished")])
    with di.api() as api:
        outcome = wait_for_introspection(api, [uuid_of("a")], 60, di.poller)
    assert outcome.reached == [uuid_of("a")]
    assert outcome.last[uuid_of("a")]["state"] == "finished"
    assert outcome.failures == []


def test_introspection_wait_fails_a_node_finished_with_an_error(clock):
    di = Discoverd(clock, a=[status("a", "error", error="Ramdisk error")])
    with di.api() as api:
        outcome = wait_for_introspection(api, [uuid_of("a")], 60, di.poller)
    assert outcome.failures == [f"introspection of node {uuid_of('a')} failed: Ramdisk error"]


def test_introspection_wait_fails_at_once_for_a_node_discoverd_does_not_know(clock):
    di = Discoverd(clock)
    with di.api() as api:
        outcome = wait_for_introspection(api, [uuid_of("a")], 60, di.poller)
    assert outcome.failures == [f"discoverd has no introspection of node {uuid_of('a')}"]
    assert clock.sleeps == []


def test_introspection_wait_times_out_with_the_last_state(clock):
    di = Discoverd(clock, a=[status("a", "waiting")])
    with di.api() as api:
        outcome = wait_for_introspection(api, [uuid_of("a")], 5, di.poller)
    assert outcome.failures == [f"timed out after 5 s waiting for introspection of node "
                                f"{uuid_of('a')} (state waiting)"]


def test_introspection_wait_can_wait_for_nodes_discoverd_does_not_know_yet(clock):
    di = Discoverd(clock, a=[None, status("a", "waiting")])
    with di.api() as api:
        outcome = wait_for_introspection(api, [uuid_of("a")], 60, di.poller, wanted="waiting",
                                         unknown_pending=True)
    assert outcome.reached == [uuid_of("a")]
    assert clock.sleeps == [2.0]


def test_introspection_wait_for_a_wanted_state(clock):
    di = Discoverd(clock, a=[status("a", "starting"), status("a", "waiting")])
    with di.api() as api:
        outcome = wait_for_introspection(api, [uuid_of("a")], 60, di.poller, wanted="waiting")
    assert outcome.reached == [uuid_of("a")]


def test_introspection_wait_for_a_wanted_state_fails_on_an_error(clock):
    di = Discoverd(clock, a=[status("a", "error", error="BMC unreachable")])
    with di.api() as api:
        outcome = wait_for_introspection(api, [uuid_of("a")], 60, di.poller, wanted="waiting")
    assert outcome.failed == [uuid_of("a")]


def test_introspection_wait_resolves_names_to_uuids_once(clock):
    di = Discoverd(clock, a=[status("a", "waiting"), status("a", "finished")])
    di.service.json("GET", "/v1/introspection/a", status("a", "waiting"))
    lines: list[str] = []
    with di.api() as api:
        outcome = wait_for_introspection(api, ["a"], 60, di.poller, lines.append)
    assert len(di.service.sent("GET", "/v1/introspection/a")) == 1
    assert outcome.reached == ["a"]
    assert lines == ["node a: introspection waiting", "node a: introspection finished"]


def test_introspection_wait_asks_for_100_nodes_a_request(clock):
    names = [f"n{i}" for i in range(250)]
    di = Discoverd(clock, **{n: [status(n, "finished")] for n in names})
    with di.api() as api:
        wait_for_introspection(api, [uuid_of(n) for n in names], 60, di.poller)
    assert [len(query(r)["uuid"].split(",")) for r in di.service.requests] == [100, 100, 50]


def test_introspection_watch_keeps_waiting_while_unfinished():
    assert IntrospectionWatch().verdict(status("a", "processing")) is Verdict.WAITING
