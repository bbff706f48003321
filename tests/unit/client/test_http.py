"""Unit tests of the operator client (`client/http.py`): the message an error answer
carries, whatever envelope the service wrapped it in."""

from __future__ import annotations

import json

import httpx

from ironsight.client import http

from ..fakes import ironic_error


def test_decode_error_unwraps_the_double_encoded_error_message():
    response = ironic_error(400, "Invalid driver nosuch.")
    assert http.decode_error(response) == "Invalid driver nosuch."


def test_decode_error_reads_the_version_negotiation_description():
    inner = {"code": 406, "title": "Not Acceptable", "description": "Version 1.200 ..."}
    response = httpx.Response(406, json={"error_message": json.dumps(inner)})
    assert http.decode_error(response) == "Version 1.200 ..."


def test_decode_error_reads_the_inspector_error_shape():
    response = httpx.Response(400, json={"error": {"message": "Node is not in inspect wait"}})
    assert http.decode_error(response) == "Node is not in inspect wait"


def test_decode_error_falls_back_to_the_body_text():
    assert http.decode_error(httpx.Response(502, text="Bad gateway\n")) == "Bad gateway"


def test_decode_error_falls_back_to_the_reason_phrase_for_an_empty_body():
    assert http.decode_error(httpx.Response(503)) == "Service Unavailable"


def test_error_message_that_is_not_json_is_shown_as_is():
    response = httpx.Response(500, json={"error_message": "plain words"})
    assert http.decode_error(response) == "plain words"


def test_node_path_keeps_a_name_in_one_path_segment():
    assert http.node_path("rack/1", "states", "power") == "/v1/nodes/rack%2F1/states/power"


def test_a_name_is_not_a_uuid():
    assert http.is_uuid("1be26c0b-03f2-4d2e-ae87-c02d7f33c123")
    assert not http.is_uuid("lab-1")


def test_baremetal_client_can_ask_for_another_microversion():
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    with http.baremetal_client(transport=httpx.MockTransport(answer), version="latest") as api:
        api.get("/v1")
    assert seen[0].headers["X-OpenStack-Ironic-API-Version"] == "latest"


def test_api_answers_is_false_while_nothing_listens(unused_tcp_port):
    assert not http.api_answers(f"http://127.0.0.1:{unused_tcp_port}", timeout=1)
