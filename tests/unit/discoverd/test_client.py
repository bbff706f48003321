"""Unit tests of the discoverd client library: calls -> requests, answers -> results/errors.

Every test talks to an `httpx.MockTransport` whose handler records the requests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from ironsight.common.auth.credentials import Credentials
from ironsight.discoverd import client

UUID1 = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
UUID2 = "5f8d1c2e-8a1b-4b34-9a1d-2f3c4d5e6f70"
BASE = "http://127.0.0.1:5050/v1"

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport handler answering from a list (the last answer repeats)."""

    def __init__(self, *answers: httpx.Response | Handler) -> None:
        self.answers = list(answers) or [httpx.Response(202, json={})]
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return answer(request) if callable(answer) else answer

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]


def status(uuid: str = UUID1, state: str = "waiting", error: str | None = None,
           **fields: Any) -> dict[str, Any]:
    finished = state in ("finished", "error")
    return {"uuid": uuid, "state": state, "finished": finished, "error": error,
            "started_at": "2025-01-01T00:00:00", "finished_at": None,
            "links": [{"rel": "self", "href": f"{BASE}/introspection/{uuid}"}], **fields}


def listing(*statuses: dict[str, Any], next_link: str | None = None) -> httpx.Response:
    body: dict[str, Any] = {"introspection": list(statuses)}
    if next_link:
        body["next"] = next_link
    return httpx.Response(200, json=body)


def query(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


# --- module constants and URLs --------------------------------------------------------------


def test_version_satisfies_the_bare_metal_requirement():
    assert client.__version_info__ >= (1, 0, 0)
    assert client.__version__ == "1.1.0"


@pytest.mark.parametrize("given", [
    None, "", "http://127.0.0.1:5050", "http://127.0.0.1:5050/", "http://127.0.0.1:5050/v1",
    "http://127.0.0.1:5050/v1/", " http://127.0.0.1:5050/v1// ",
])
def test_base_url_forms_all_reach_the_v1_root(given):
    rec = Recorder(httpx.Response(200, json=status()))
    client.get_status(UUID1, base_url=given, transport=rec.transport)
    assert str(rec.last.url) == f"{BASE}/introspection/{UUID1}"


def test_base_url_with_a_path_prefix_keeps_it():
    rec = Recorder(httpx.Response(200, json=status()))
    client.get_status(UUID1, base_url="https://api.example/inspector", transport=rec.transport)
    assert str(rec.last.url) == f"https://api.example/inspector/v1/introspection/{UUID1}"


# --- headers --------------------------------------------------------------------------------


def test_requests_carry_the_api_version_header_and_no_token_by_default():
    rec = Recorder(httpx.Response(200, json=status()))
    client.get_status(UUID1, transport=rec.transport)
    assert rec.last.headers["X-OpenStack-Ironic-Inspector-API-Version"] == "1.18"
    assert "X-Auth-Token" not in rec.last.headers


def test_auth_token_is_sent_when_given():
    rec = Recorder()
    client.introspect(UUID1, auth_token="s3cret", transport=rec.transport)
    assert rec.last.headers["X-Auth-Token"] == "s3cret"


def test_empty_auth_token_sends_no_header():
    rec = Recorder()
    client.introspect(UUID1, auth_token="", transport=rec.transport)
    assert "X-Auth-Token" not in rec.last.headers


# --- each call's request and result ----------------------------------------------------------


def test_introspect_posts_without_query_by_default():
    rec = Recorder(httpx.Response(202, json={}))
    client.introspect(UUID1, transport=rec.transport)
    assert rec.last.method == "POST"
    assert str(rec.last.url) == f"{BASE}/introspection/{UUID1}"
    assert rec.last.content == b""


@pytest.mark.parametrize(("manage_boot", "sent"), [(True, "true"), (False, "false")])
def test_introspect_passes_manage_boot(manage_boot, sent):
    rec = Recorder()
    client.introspect(UUID1, manage_boot=manage_boot, transport=rec.transport)
    assert query(rec.last) == {"manage_boot": sent}


def test_introspect_quotes_a_node_name_into_one_segment():
    rec = Recorder()
    client.introspect("rack 1/node?2", transport=rec.transport)
    assert rec.last.url.raw_path == b"/v1/introspection/rack%201%2Fnode%3F2"


def test_get_status_returns_the_body():
    body = status(state="processing")
    rec = Recorder(httpx.Response(200, json=body))
    assert client.get_status(UUID1, transport=rec.transport) == body
    assert rec.last.method == "GET"


def test_abort_posts_to_abort():
    rec = Recorder()
    client.abort(UUID1, transport=rec.transport)
    assert (rec.last.method, rec.last.url.path) == ("POST", f"/v1/introspection/{UUID1}/abort")


@pytest.mark.parametrize(("raw", "path"), [
    (False, f"/v1/introspection/{UUID1}/data"),
    (True, f"/v1/introspection/{UUID1}/data/unprocessed"),
])
def test_get_data(raw, path):
    rec = Recorder(httpx.Response(200, json={"inventory": {"cpu": {"count": 4}}}))
    assert client.get_data(UUID1, raw=raw, transport=rec.transport) == {
        "inventory": {"cpu": {"count": 4}}}
    assert (rec.last.method, rec.last.url.path) == ("GET", path)


def test_reapply_without_data_sends_no_body():
    rec = Recorder()
    client.reapply(UUID1, transport=rec.transport)
    assert rec.last.method == "POST"
    assert rec.last.url.path == f"/v1/introspection/{UUID1}/data/unprocessed"
    assert rec.last.content == b""


def test_reapply_with_data_sends_it_as_json():
    rec = Recorder()
    client.reapply(UUID1, {"inventory": {}}, transport=rec.transport)
    assert rec.last.headers["Content-Type"] == "application/json"
    assert json.loads(rec.last.content) == {"inventory": {}}


# --- list_statuses --------------------------------------------------------------------------


def test_list_statuses_passes_filters_and_stops_at_limit():
    rec = Recorder(listing(status(UUID1), status(UUID2), next_link=f"{BASE}/introspection?x=1"))
    result = client.list_statuses(marker=UUID2, limit=1, state=["waiting", "error"],
                                  transport=rec.transport)
    assert [s["uuid"] for s in result] == [UUID1]
    assert len(rec.requests) == 1
    assert query(rec.last) == {"marker": UUID2, "limit": "1", "state": "waiting,error"}


def test_list_statuses_follows_next_links_with_our_own_base_url():
    rec = Recorder(
        listing(status(UUID1), next_link=f"http://public.example/v1/introspection?"
                                         f"limit=1&marker={UUID1}"),
        listing(status(UUID2)),
    )
    result = client.list_statuses(state="finished", transport=rec.transport)
    assert [s["uuid"] for s in result] == [UUID1, UUID2]
    second = rec.requests[1]
    assert second.url.host == "127.0.0.1"
    assert query(second) == {"state": "finished", "limit": "1", "marker": UUID1}


def test_list_statuses_stops_on_a_repeated_next_link():
    link = f"{BASE}/introspection?marker={UUID1}"
    rec = Recorder(listing(status(UUID1), next_link=link))
    assert len(client.list_statuses(transport=rec.transport)) == 2
    assert len(rec.requests) == 2


# --- get_statuses (batched) -----------------------------------------------------------------


def test_get_statuses_is_one_request_keyed_by_uuid():
    rec = Recorder(listing(status(UUID2, "finished"), status(UUID1)))
    result = client.get_statuses([UUID1, UUID2], transport=rec.transport)
    assert list(result) == [UUID1, UUID2]
    assert result[UUID2]["state"] == "finished"
    assert len(rec.requests) == 1
    assert rec.last.url.path == "/v1/introspection"
    assert query(rec.last) == {"uuid": f"{UUID1},{UUID2}"}


def test_get_statuses_chunks_long_lists():
    uuids = [f"00000000-0000-0000-0000-{i:012d}" for i in range(250)]

    def answer(request: httpx.Request) -> httpx.Response:
        return listing(*(status(u) for u in query(request)["uuid"].split(",")))

    rec = Recorder(answer)
    result = client.get_statuses(uuids, transport=rec.transport)
    sizes = [len(query(r)["uuid"].split(",")) for r in rec.requests]
    assert sizes == [100, 100, 50]
    assert list(result) == uuids


def test_get_statuses_leaves_out_unknown_and_unasked_nodes():
    rec = Recorder(listing(status(UUID1), status("someone-else")))
    assert list(client.get_statuses([UUID1, UUID2], transport=rec.transport)) == [UUID1]


def test_get_statuses_follows_next_and_dedupes_the_request():
    rec = Recorder(listing(status(UUID1), next_link=f"{BASE}/introspection?marker={UUID1}"),
                   listing(status(UUID2)))
    result = client.get_statuses([UUID1, UUID2, UUID1], transport=rec.transport)
    assert list(result) == [UUID1, UUID2]
    assert query(rec.requests[0]) == {"uuid": f"{UUID1},{UUID2}"}
    assert query(rec.requests[1]) == {"uuid": f"{UUID1},{UUID2}", "marker": UUID1}


def test_get_statuses_of_nothing_sends_nothing():
    rec = Recorder()
    assert client.get_statuses([], transport=rec.transport) == {}
    assert rec.requests == []


# --- argument checks ------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda t: client.introspect(42, transport=t),  # type: ignore[arg-type]
    lambda t: client.get_status(None, transport=t),  # type: ignore[arg-type]
    lambda t: client.abort(b"abc", transport=t),  # type: ignore[arg-type]
    lambda t: client.get_data(1, transport=t),  # type: ignore[arg-type]
    lambda t: client.reapply(1.5, transport=t),  # type: ignore[arg-type]
    lambda t: client.get_statuses([UUID1, 7], transport=t),  # type: ignore[list-item]
    lambda t: client.get_statuses(UUID1, transport=t),
    lambda t: client.wait_for_finish(UUID1, transport=t),
])
def test_non_string_uuids_raise_type_error_before_any_request(call):
    rec = Recorder()
    with pytest.raises(TypeError):
        call(rec.transport)
    assert rec.requests == []


# --- errors ---------------------------------------------------------------------------------


def test_error_message_is_decoded_from_the_inspector_shape():
    rec = Recorder(httpx.Response(
        404, json={"error": {"message": f"Could not find node {UUID1} in cache"}}))
    with pytest.raises(client.ClientError) as info:
        client.get_status(UUID1, transport=rec.transport)
    assert info.value.status_code == 404
    assert info.value.message == f"Could not find node {UUID1} in cache"
    assert str(info.value) == f"Could not find node {UUID1} in cache (HTTP 404)"
    assert not isinstance(info.value, client.ServiceUnavailable)


def test_error_message_falls_back_to_the_body_text():
    rec = Recorder(httpx.Response(400, text="Node is in a bad state\n"))
    with pytest.raises(client.ClientError) as info:
        client.introspect(UUID1, transport=rec.transport)
    assert (info.value.status_code, info.value.message) == (400, "Node is in a bad state")


def test_error_without_a_body_uses_the_reason_phrase():
    rec = Recorder(httpx.Response(409))
    with pytest.raises(client.ClientError, match="Conflict"):
        client.abort(UUID1, transport=rec.transport)


def test_non_json_success_is_a_client_error():
    rec = Recorder(httpx.Response(200, text="<html>"))
    with pytest.raises(client.ClientError, match="not JSON"):
        client.get_status(UUID1, transport=rec.transport)


@pytest.mark.parametrize(("exc", "text"), [
    (httpx.ConnectError("[Errno 111] Connection refused"), "cannot reach discoverd at"),
    (httpx.ReadTimeout("timed out"), "no answer from discoverd at"),
    (httpx.RemoteProtocolError("peer closed"), "cannot reach discoverd at"),
])
def test_transport_failures_are_service_unavailable(exc, text):
    def fail(request: httpx.Request) -> httpx.Response:
        raise exc

    with pytest.raises(client.ServiceUnavailable) as info:
        client.get_status(UUID1, base_url="http://10.0.0.9:5050",
                          transport=httpx.MockTransport(fail))
    assert info.value.status_code is None
    assert text in str(info.value)
    assert "http://10.0.0.9:5050/v1" in str(info.value)
    assert isinstance(info.value, client.ClientError)


def test_real_connection_refused_is_service_unavailable(unused_tcp_port):
    with pytest.raises(client.ServiceUnavailable):
        client.get_status(UUID1, base_url=f"http://127.0.0.1:{unused_tcp_port}", timeout=2)


def test_timeout_is_applied_to_requests():
    rec = Recorder(httpx.Response(200, json=status()))
    client.get_status(UUID1, timeout=3, transport=rec.transport)
    assert rec.last.extensions["timeout"] == {"connect": 3, "read": 3, "write": 3, "pool": 3}


def test_default_timeout_is_bounded():
    rec = Recorder(httpx.Response(200, json=status()))
    client.get_status(UUID1, transport=rec.transport)
    assert rec.last.extensions["timeout"]["read"] == client.DEFAULT_TIMEOUT == 10.0


# --- wait_for_finish ------------------------------------------------------------------------


def test_wait_for_finish_polls_only_the_unfinished_nodes():
    rec = Recorder(
        listing(status(UUID1, "waiting"), status(UUID2, "finished")),
        listing(status(UUID1, "processing")),
        listing(status(UUID1, "error", error="Canceled by operator")),
    )
    sleeps: list[float] = []
    result = client.wait_for_finish([UUID1, UUID2], retry_interval=5, transport=rec.transport,
                                    sleep_function=sleeps.append)
    assert result[UUID1]["error"] == "Canceled by operator"
    assert result[UUID2]["state"] == "finished"
    assert [query(r)["uuid"] for r in rec.requests] == [f"{UUID1},{UUID2}", UUID1, UUID1]
    assert sleeps == [5, 5]


def test_wait_for_finish_times_out_listing_the_unfinished():
    rec = Recorder(listing(status(UUID1, "waiting"), status(UUID2, "finished")))
    sleeps: list[float] = []
    with pytest.raises(client.WaitTimeoutError) as info:
        client.wait_for_finish([UUID1, UUID2], retry_interval=1, max_retries=3,
                               transport=rec.transport, sleep_function=sleeps.append)
    assert info.value.unfinished == [UUID1]
    assert info.value.statuses[UUID1]["state"] == "waiting"
    assert UUID1 in str(info.value) and UUID2 not in str(info.value)
    assert len(rec.requests) == 3
    assert sleeps == [1, 1]


def test_wait_for_finish_fails_for_a_node_discoverd_does_not_know():
    rec = Recorder(listing(status(UUID1, "waiting")))
    with pytest.raises(client.ClientError) as info:
        client.wait_for_finish([UUID1, UUID2], transport=rec.transport,
                               sleep_function=lambda s: None)
    assert info.value.status_code == 404
    assert UUID2 in info.value.message


# --- the pooled clients ---------------------------------------------------------------------


def test_client_reuses_one_connection_pool_and_closes_it():
    rec = Recorder(httpx.Response(200, json=status()))
    with client.Client("http://h:1", "tok", transport=rec.transport) as api:
        api.get_status(UUID1)
        api.get_statuses([UUID1])
        assert api.base_url == "http://h:1/v1"
    assert api._http.is_closed
    assert [r.headers["X-Auth-Token"] for r in rec.requests] == ["tok", "tok"]


async def test_async_client_has_the_same_calls():
    rec = Recorder(
        httpx.Response(202, json={}),
        listing(status(UUID1, "waiting")),
        listing(status(UUID1, "finished")),
        httpx.Response(200, json={"inventory": {}}),
    )
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async with client.AsyncClient(transport=rec.transport, sleep_function=sleep) as api:
        await api.introspect(UUID1, manage_boot=False)
        final = await api.wait_for_finish([UUID1], retry_interval=2)
        data = await api.get_data(UUID1)
    assert final[UUID1]["state"] == "finished"
    assert data == {"inventory": {}}
    assert sleeps == [2]
    assert [(r.method, r.url.path) for r in rec.requests] == [
        ("POST", f"/v1/introspection/{UUID1}"), ("GET", "/v1/introspection"),
        ("GET", "/v1/introspection"), ("GET", f"/v1/introspection/{UUID1}/data"),
    ]


async def test_async_client_maps_connection_errors():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    async with client.AsyncClient(transport=httpx.MockTransport(refuse)) as api:
        with pytest.raises(client.ServiceUnavailable):
            await api.abort(UUID1)
        with pytest.raises(TypeError):
            await api.abort(3)  # type: ignore[arg-type]


# --- inspection rules and forwarding --------------------------------------------------------


def test_rules_go_to_their_dialects_collection():
    rec = Recorder(httpx.Response(201, json={"uuid": UUID1}))
    with client.Client(BASE, transport=rec.transport) as api:
        api.create_rule({"actions": []})
        api.create_rule({"actions": []}, dialect="inspector")
        api.delete_rule(UUID1, dialect="inspector")
        api.delete_all_rules()
    assert [(r.method, r.url.path) for r in rec.requests] == [
        ("POST", "/v1/inspection_rules"), ("POST", "/v1/rules"),
        ("DELETE", f"/v1/rules/{UUID1}"), ("DELETE", "/v1/inspection_rules")]


def test_an_unknown_dialect_is_a_value_error():
    with client.Client(BASE, transport=Recorder().transport) as api, \
            pytest.raises(ValueError, match="unknown rule dialect"):
        api.list_rules("klingon")


def test_listing_ironic_rules_follows_next():
    rec = Recorder(
        httpx.Response(200, json={"inspection_rules": [{"uuid": UUID1}],
                                  "next": f"http://x/v1/inspection_rules?marker={UUID1}"}),
        httpx.Response(200, json={"inspection_rules": [{"uuid": UUID2}]}))
    with client.Client(BASE, transport=rec.transport) as api:
        found = api.list_rules(detail=True)
    assert [r["uuid"] for r in found] == [UUID1, UUID2]
    assert rec.last.url.params["marker"] == UUID1
    assert rec.last.url.params["detail"] == "true"


def test_a_dry_run_posts_the_node_and_the_rule():
    rec = Recorder(httpx.Response(200, json={"matched": True}))
    with client.Client(BASE, transport=rec.transport) as api:
        assert api.dry_run({"actions": []}, "node-1") == {"matched": True}
    assert rec.last.url.path == "/v1/inspection_rules/dry_run"
    assert json.loads(rec.last.content) == {"node": "node-1", "rule": {"actions": []}}


async def test_forward_hands_back_errors_as_they_are():
    rec = Recorder(httpx.Response(404, json={"error": {"message": "no"}},
                                  headers={"X-Thing": "1"}))
    async with client.AsyncClient(BASE, transport=rec.transport) as api:
        answer = await api.forward("GET", "inspection_rules/x", {"fields": "uuid"})
    assert (answer.status, answer.headers["x-thing"]) == (404, "1")
    assert json.loads(answer.body) == {"error": {"message": "no"}}
    assert rec.last.url.params["fields"] == "uuid"


async def test_forward_raises_only_when_there_is_no_answer():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    async with client.AsyncClient(transport=httpx.MockTransport(refuse)) as api:
        with pytest.raises(client.ServiceUnavailable):
            await api.forward("GET", "inspection_rules")


class Tokens:
    """A TokenSource handing out numbered tokens; `invalidate` moves to the next one."""

    def __init__(self) -> None:
        self.issued = 1

    async def headers(self) -> dict[str, str]:
        return {"X-Auth-Token": f"token-{self.issued}"}

    def invalidate(self) -> None:
        self.issued += 1


async def test_forward_renews_a_refused_token_once():
    rec = Recorder(httpx.Response(401, json={"error": {"message": "expired"}}),
                   httpx.Response(200, json={"inspection_rules": []}))
    credentials = Credentials(tokens=Tokens())
    async with client.AsyncClient(BASE, transport=rec.transport,
                                  credentials=credentials) as api:
        answer = await api.forward("GET", "inspection_rules")
    assert answer.status == 200
    assert [r.headers["X-Auth-Token"] for r in rec.requests] == ["token-1", "token-2"]
