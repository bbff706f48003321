"""Error bodies: what our two envelopes look like, and the one decoder every client reads
them (and other services' bodies) with."""

from __future__ import annotations

import json

from ironsight.common.api.errors import (
    MAX_TEXT,
    error_message,
    inspector_envelope,
    ironic_envelope,
)
from ironsight.common.exceptions import Conflict, IronsightError


def test_ironic_envelope_is_a_fault_document_encoded_as_a_string() -> None:
    body = ironic_envelope(Conflict("Node x is locked"))
    assert json.loads(body["error_message"]) == {
        "faultcode": "Client", "faultstring": "Node x is locked", "debuginfo": None}


def test_ironic_envelope_blames_the_server_for_a_5xx() -> None:
    body = ironic_envelope(IronsightError("boom"))
    assert json.loads(body["error_message"])["faultcode"] == "Server"


def test_inspector_envelope() -> None:
    assert inspector_envelope(Conflict("busy")) == {"error": {"message": "busy"}}


def test_decoder_reads_the_ironic_envelope() -> None:
    body = json.dumps(ironic_envelope(Conflict("Node x is locked"))).encode()
    assert error_message(body, "Conflict") == "Node x is locked"


def test_decoder_reads_the_inspector_envelope() -> None:
    body = json.dumps(inspector_envelope(Conflict("busy"))).encode()
    assert error_message(body, "Conflict") == "busy"


def test_decoder_reads_a_version_document_description() -> None:
    body = json.dumps({"error_message": {"description": "Version 9.9 is not supported"}})
    assert error_message(body.encode(), "x") == "Version 9.9 is not supported"


def test_decoder_shows_plain_text_cut_to_a_readable_length() -> None:
    assert error_message(b"  upstream timed out \n", "x") == "upstream timed out"
    assert len(error_message(b"<html>" * 1000, "x")) == MAX_TEXT


def test_decoder_falls_back_when_the_body_says_nothing() -> None:
    assert error_message(b"", "Bad Gateway") == "Bad Gateway"
    assert error_message(b'{"error": {}}', "Bad Gateway") == '{"error": {}}'
