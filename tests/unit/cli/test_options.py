"""Unit tests of what every client command group shares (`cli/options.py`): where requests
go and with which headers and timeout, where `-f` may be given, and how a failure of the
service turns into `Error: ...` and exit code 1."""

from __future__ import annotations

import json
from typing import Any

import click
import httpx
import pytest

from ironsight.cli.options import KEY_VALUE

from ..fakes import ironic_error
from .conftest import BASE, NODE_UUID, node_obj

# --- connection settings ------------------------------------------------------------------


def test_requests_carry_the_ironic_microversion_header(run, api):
    api.json("GET", f"/v1/nodes/{NODE_UUID}", node_obj())
    run("node", "show", NODE_UUID)
    assert api.requests[0].headers["X-OpenStack-Ironic-API-Version"] == "1.115"


def test_default_url_is_the_local_bare_metal_api(run, api):
    api.json("GET", "/v1/drivers", {"drivers": []})
    run("driver", "list")
    assert str(api.requests[0].url) == f"{BASE}/v1/drivers"


def test_url_comes_from_the_environment(run, api):
    api.json("GET", "/v1/drivers", {"drivers": []})
    run("driver", "list", env={"IRONSIGHT_URL": "http://bm.example:7000/"})
    assert str(api.requests[0].url) == "http://bm.example:7000/v1/drivers"


def test_url_given_on_the_command_wins_over_the_group(run, api):
    api.json("GET", "/v1/drivers", {"drivers": []})
    run("driver", "--url", "http://group:1", "list", "--url", "http://command:2/v1")
    assert str(api.requests[0].url) == "http://command:2/v1/drivers"


def test_timeout_option_sets_the_http_timeout(run, api):
    api.json("GET", "/v1/drivers", {"drivers": []})
    run("driver", "list", "--timeout", "7")
    assert api.requests[0].extensions["timeout"]["read"] == 7.0


def test_format_can_be_given_on_the_group(run, api):
    api.json("GET", "/v1/nodes/demo-0", node_obj())
    result = run("node", "-f", "json", "show", "demo-0")
    assert json.loads(result.stdout) == node_obj()


# --- errors -------------------------------------------------------------------------------


def test_api_error_prints_faultstring_and_status_and_exits_1(run, api):
    api.add("GET", "/v1/nodes/nope", ironic_error(404, "Node nope could not be found."))
    result = run("node", "show", "nope")
    assert result.exit_code == 1
    assert result.stderr == "Error: Node nope could not be found. (HTTP 404)\n"
    assert result.stdout == ""


def test_connection_refused_names_the_url_and_the_serve_command(run):
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    result = run("node", "list", "--url", "http://127.0.0.1:9",
                 transport=httpx.MockTransport(refuse))
    assert result.exit_code == 1
    assert "http://127.0.0.1:9" in result.stderr
    assert "is `ironsight serve` running?" in result.stderr


def test_read_timeout_is_reported_with_the_timeout_used(run):
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    result = run("node", "list", "--timeout", "3", transport=httpx.MockTransport(hang))
    assert result.exit_code == 1
    assert f"no answer from {BASE} within 3 s" in result.stderr


def test_a_value_can_be_read_from_a_file_so_no_secret_is_in_argv(tmp_path: Any) -> None:
    secret = tmp_path / "key"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    assert KEY_VALUE.convert(f"ssh_key_contents=@{secret}", None, None) == (
        "ssh_key_contents", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")


def test_a_double_at_sign_is_a_literal_at_sign() -> None:
    assert KEY_VALUE.convert("extra=@@home", None, None) == ("extra", "@home")


def test_an_unreadable_value_file_is_a_usage_error_naming_the_key(tmp_path: Any) -> None:
    with pytest.raises(click.BadParameter, match="ssh_key_contents: cannot read"):
        KEY_VALUE.convert(f"ssh_key_contents=@{tmp_path / 'missing'}", None, None)
