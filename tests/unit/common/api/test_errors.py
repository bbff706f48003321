"""Error bodies: what our two envelopes look like, and the one decoder every client reads
them (and other services' bodies) with."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field, ValidationError

from ironsight.common.api.errors import (
    MAX_TEXT,
    error_message,
    format_validation_error,
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


class _Limited(BaseModel):
    name: str = Field(default="", max_length=4)
    steps: list[int] = Field(default_factory=lambda: [1], min_length=1)


def _refusal(**values: object) -> str:
    with pytest.raises(ValidationError) as caught:
        _Limited.model_validate(values)
    return format_validation_error(caught.value)


def test_a_value_too_long_is_refused_in_jsonschemas_words_without_the_value() -> None:
    text = _refusal(name="s3cr3t-and-long")
    assert text.startswith("Invalid input for field 'name': the value is too long (")
    assert "s3cr3t" not in text


def test_a_value_too_short_is_refused_in_jsonschemas_words() -> None:
    assert _refusal(steps=[]).startswith(
        "Invalid input for field 'steps': the value is too short (")
