"""Inspection rules through the bare-metal API under http_basic, for real: the bare-metal API
decides who may call (reads a reader, writes an admin) before forwarding, and reaches
discoverd with its own `[discoverd]` credentials, whose user needs the admin role there for
writes (docs/rules.md, docs/security.md)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ..inspection.helpers import Service
from ..security import USERS, as_ini, auth_sections, basic, write_htpasswd

pytestmark = pytest.mark.functional

V96 = {"X-OpenStack-Ironic-API-Version": "1.96"}
RULE = {"actions": [{"op": "add-trait", "args": {"name": "CUSTOM_AUTH"}}]}
# the bare-metal service's user in discoverd may write rules
USERS_HERE = {**USERS, "bm-svc": (USERS["bm-svc"][0], "admin")}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    state = tmp_path_factory.mktemp("auth-rules")
    htpasswd = write_htpasswd(state / "htpasswd", USERS_HERE)
    svc = Service(state, as_ini(auth_sections(htpasswd, USERS_HERE)))
    svc.auth = basic("admin")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


def call(service: Service, user: str | None, method: str, path: str,
         body: object = None) -> httpx.Response:
    return httpx.request(method, f"{service.url}{path}", headers=V96, json=body, timeout=15,
                         auth=basic(user) if user else None)


def test_an_admin_creates_a_rule_through_the_service_user(service: Service) -> None:
    created = call(service, "admin", "POST", "/v1/inspection_rules", RULE)
    assert created.status_code == 201, created.text
    assert call(service, "admin", "DELETE",
                f"/v1/inspection_rules/{created.json()['uuid']}").status_code == 204


def test_a_reader_lists_rules(service: Service) -> None:
    assert call(service, "viewer", "GET", "/v1/inspection_rules").status_code == 200


def test_a_member_may_not_create_a_rule(service: Service) -> None:
    assert call(service, "ops", "POST", "/v1/inspection_rules", RULE).status_code == 403


def test_an_anonymous_caller_is_asked_to_authenticate(service: Service) -> None:
    assert call(service, None, "GET", "/v1/inspection_rules").status_code == 401


# --- discoverd's boot_params: a callback token, for the conductor only -----------------------

def call_discoverd(service: Service, user: str | None, path: str) -> httpx.Response:
    return httpx.post(f"{service.di_url}{path}", timeout=15,
                      auth=basic(user) if user else None)


BOOT_PARAMS = "/v1/introspection/7f3c9f7e-0000-4000-8000-000000000000/boot_params"


def test_a_member_may_not_get_a_callback_token(service: Service) -> None:
    assert call_discoverd(service, "ops", BOOT_PARAMS).status_code == 403


def test_an_anonymous_caller_gets_no_callback_token(service: Service) -> None:
    assert call_discoverd(service, None, BOOT_PARAMS).status_code == 401


def test_an_admin_is_told_the_introspection_is_unknown(service: Service) -> None:
    assert call_discoverd(service, "admin", BOOT_PARAMS).status_code == 404


# --- discoverd's timeline steps: the conductor's only; the ramdisk's hello and beat: open -----

PHASES = "/v1/phases"


def test_a_member_may_not_add_steps_to_a_timeline(service: Service) -> None:
    assert call_discoverd(service, "ops", PHASES).status_code == 403
    assert call_discoverd(service, None, PHASES).status_code == 401


@pytest.mark.parametrize("path", ["/v1/hello", "/v1/beat"])
def test_the_ramdisks_hello_and_beat_need_no_credentials_but_a_token(
        service: Service, path: str) -> None:
    resp = httpx.post(f"{service.di_url}{path}", timeout=15,
                      json={"macs": ["52:54:00:77:77:77"], "stage": "s"})
    assert resp.status_code == 404  # past authentication: no introspection has that MAC


# --- discoverd's fleet queries: reads, the long POST form included --------------------------

def test_a_reader_queries_the_fleet_by_either_form(service: Service) -> None:
    got = httpx.get(f"{service.di_url}/v1/fleet/nodes", params={"where": "true"},
                    auth=basic("viewer"), timeout=15)
    assert got.status_code == 200, got.text
    posted = httpx.post(f"{service.di_url}/v1/fleet/query", json={"where": "true"},
                        auth=basic("viewer"), timeout=15)
    assert posted.status_code == 200, posted.text


def test_an_anonymous_caller_may_not_query_the_fleet(service: Service) -> None:
    resp = httpx.post(f"{service.di_url}/v1/fleet/query", json={"where": "true"}, timeout=15)
    assert resp.status_code == 401
