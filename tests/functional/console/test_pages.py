"""The console without a browser: what its server does with forms and sessions it did not
make (forged, stale, foreign, malformed) and what it answers around its pages."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.functional.conftest import ServiceProcess, free_tcp_port
from tests.functional.security import USERS

from .lab import PROJECT, TENANT, Lab, csrf_of, logged_in


def test_a_page_without_a_session_goes_to_the_login_with_the_way_back(lab: Lab) -> None:
    resp = httpx.get(f"{lab.ui}/nodes?state=manageable")
    assert resp.status_code == 303
    assert resp.headers["location"] == "/ui/login?next=%2Fui%2Fnodes%3Fstate%3Dmanageable"


def test_a_form_without_a_session_is_a_401_page(lab: Lab) -> None:
    resp = httpx.post(f"{lab.ui}/nodes/bulk", data={"action": "manage"})
    assert resp.status_code == 401
    assert "log in again" in resp.text


def test_a_wrong_password_is_a_401_on_the_form_and_sets_no_cookie(lab: Lab) -> None:
    resp = httpx.post(f"{lab.ui}/login", data={"user": "admin", "password": "nope"})
    assert resp.status_code == 401
    assert "Wrong user name or password." in resp.text
    assert "set-cookie" not in resp.headers


def test_the_session_cookie_is_secure_httponly_and_same_site_strict(lab: Lab) -> None:
    resp = httpx.post(f"{lab.ui}/login", data={"user": "viewer",
                                               "password": USERS["viewer"][0]})
    cookie = resp.headers["set-cookie"].lower()
    for flag in ("secure", "httponly", "samesite=strict", "path=/ui/"):
        assert flag in cookie
    assert USERS["viewer"][0].lower() not in cookie


def test_every_page_forbids_framing_and_foreign_scripts(lab: Lab) -> None:
    with logged_in(lab, "viewer") as client:
        resp = client.get("/nodes")
    assert resp.headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in resp.headers["content-security-policy"]
    assert resp.headers["cache-control"] == "no-store"


def test_the_stylesheet_is_kept_by_the_browser_and_revalidated(lab: Lab) -> None:
    first = httpx.get(f"{lab.ui}/static/console.css")
    assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
    again = httpx.get(f"{lab.ui}/static/console.css",
                      headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304


def test_a_login_never_sends_the_user_to_another_site(lab: Lab) -> None:
    resp = httpx.post(f"{lab.ui}/login", data={"user": "viewer", "password":
                                               USERS["viewer"][0], "next": "//evil.example/"})
    assert resp.headers["location"] == "/ui/nodes"


def test_a_form_without_the_csrf_token_is_refused_and_changes_nothing(lab: Lab) -> None:
    node = lab.make_node()
    with logged_in(lab, "admin") as client:
        resp = client.post("/nodes/bulk/run", data={"action": "maintenance_on",
                                                    "scope": "selected", "expected": "1",
                                                    "node": node["uuid"]})
    assert resp.status_code == 403
    assert "CSRF" in resp.text
    assert lab.node(node["uuid"])["maintenance"] is False


def test_a_form_from_another_site_is_refused(lab: Lab) -> None:
    node = lab.make_node()
    with logged_in(lab, "admin") as client:
        token = csrf_of(client)
        resp = client.post("/nodes/bulk/run", headers={"Origin": "https://evil.example"},
                           data={"csrf": token, "action": "maintenance_on",
                                 "scope": "selected", "expected": "1", "node": node["uuid"]})
    assert resp.status_code == 403
    assert lab.node(node["uuid"])["maintenance"] is False


def test_a_reader_forging_an_action_form_is_refused_by_the_server(lab: Lab) -> None:
    node = lab.make_node()
    with logged_in(lab, "viewer") as client:
        token = csrf_of(client)
        resp = client.post("/nodes/bulk/run", data={
            "csrf": token, "action": "maintenance_on", "scope": "selected", "expected": "1",
            "node": node["uuid"]})
    assert resp.status_code == 403
    assert "role reader" in resp.text
    assert lab.node(node["uuid"])["maintenance"] is False


def test_a_tampered_session_cookie_is_no_session(lab: Lab) -> None:
    with logged_in(lab, "viewer") as client:
        cookie = client.cookies["ironsight_session"]
        body, _, signature = cookie.partition(".")
        client.cookies.set("ironsight_session", body[:-2] + "AA." + signature, path="/ui/")
        resp = client.get("/nodes")
    assert resp.status_code == 303 and "/ui/login" in resp.headers["location"]


@pytest.mark.parametrize(("form", "named"), [
    ({"action": "explode", "scope": "selected"}, "action:"),
    ({"action": "manage", "scope": "everything"}, "scope:"),
    ({"action": "manage", "scope": "selected", "node": "not-a-uuid"}, "node:"),
    ({"action": "manage", "scope": "selected"}, "node: no node is selected"),
    ({"action": "add_trait", "scope": "matching", "trait": "lower case"}, "trait:"),
    ({"action": "manage", "scope": "matching", "f_min_cpus": "lots"}, "min_cpus:"),
])
def test_a_bad_bulk_form_is_a_400_naming_the_field(lab: Lab, form: dict[str, str],
                                                   named: str) -> None:
    with logged_in(lab, "admin") as client:
        resp = client.post("/nodes/bulk", data={"csrf": csrf_of(client), **form})
    assert resp.status_code == 400
    assert named in resp.text


def test_all_that_match_is_not_acted_on_when_the_count_changed_since_confirming(
        lab: Lab) -> None:
    lab.make_node(name="count-a", owner="count-test")
    with logged_in(lab, "admin") as client:
        token = csrf_of(client)
        form: dict[str, Any] = {"csrf": token, "action": "maintenance_on", "scope": "matching",
                                "f_owner": "count-test"}
        confirm = client.post("/nodes/bulk", data=form)
        assert confirm.status_code == 200
        assert re.search(r'id="confirm-count">1<', confirm.text)
        late = lab.make_node(name="count-b", owner="count-test")
        resp = client.post("/nodes/bulk/run", data={**form, "expected": "1"})
    assert resp.status_code == 409
    assert "now matches 2 nodes, not 1: nothing was done" in resp.text
    assert lab.node(late["uuid"])["maintenance"] is False


def test_a_console_action_is_in_node_history_with_its_user(lab: Lab) -> None:
    node = lab.make_node()
    with logged_in(lab, "ops") as client:
        resp = client.post("/nodes/bulk/run", data={
            "csrf": csrf_of(client), "action": "add_trait", "scope": "selected",
            "expected": "1", "node": node["uuid"], "trait": "CUSTOM_FROM_CONSOLE"})
    assert resp.status_code == 200
    assert "1 of 1 done" in resp.text
    assert lab.node(node["uuid"])["traits"] == ["CUSTOM_FROM_CONSOLE"]
    with lab.api() as api:
        events = api.get(f"/v1/nodes/{node['uuid']}/history", params={"detail": "True"}).json()
    assert any(e["user"] == "ops" for e in events["history"]), events


def test_an_unknown_node_is_a_404_page(lab: Lab) -> None:
    with logged_in(lab, "viewer") as client:
        resp = client.get("/nodes/no-such-node")
    assert resp.status_code == 404
    assert "no-such-node" in resp.text


def test_an_unknown_tab_is_a_404_naming_the_tabs(lab: Lab) -> None:
    with logged_in(lab, "viewer") as client:
        resp = client.get("/nodes/gpu-1", params={"tab": "secrets"})
    assert resp.status_code == 404 and "tab:" in resp.text


def test_a_bad_hardware_expression_is_shown_with_its_position_and_no_rows(lab: Lab) -> None:
    with logged_in(lab, "viewer") as client:
        resp = client.get("/nodes", params={"where": "hardware.cpu_count >>> 2"})
    assert resp.status_code == 200
    assert 'id="problem"' in resp.text and "where" in resp.text
    assert 'data-uuid="' not in resp.text


def test_a_bad_filter_value_is_named_beside_the_form(lab: Lab) -> None:
    with logged_in(lab, "viewer") as client:
        resp = client.get("/nodes", params={"min_memory_gib": "a lot"})
    assert resp.status_code == 200
    assert "min_memory_gib: &#39;a lot&#39; is not a whole number" in resp.text


def test_the_console_can_have_a_listener_of_its_own(tmp_path: Path) -> None:
    svc = ServiceProcess(tmp_path)
    port = free_tcp_port()
    svc.configure(console={"host": "127.0.0.1", "port": str(port)}).start()
    try:
        own = httpx.get(f"http://127.0.0.1:{port}/", follow_redirects=True)
        assert own.status_code == 200 and 'id="nodes"' in own.text  # noauth: no login
        assert httpx.get(f"http://127.0.0.1:{port}/v1/nodes").status_code == 404
        assert httpx.get(f"{svc.url}/ui/nodes").status_code == 404  # not on the API's
    finally:
        svc.stop()


def test_a_login_posted_from_another_site_is_refused(lab: Lab) -> None:
    resp = httpx.post(f"{lab.ui}/login", headers={"Origin": "https://evil.example"},
                      data={"user": "viewer", "password": USERS["viewer"][0]})
    assert resp.status_code == 403
    assert "set-cookie" not in resp.headers


def test_without_discoverd_the_node_list_says_what_to_configure(tmp_path: Path) -> None:
    svc = ServiceProcess(tmp_path).configure(introspection={"enabled": "false"}).start()
    try:
        resp = httpx.get(f"{svc.url}/ui/nodes", follow_redirects=True)
    finally:
        svc.stop()
    assert resp.status_code == 200
    assert "set [discoverd] service_url" in resp.text


def test_keystone_users_log_in_with_their_project_and_get_their_role(
        tmp_path: Path, keystone: Any) -> None:
    from tests.functional.keystone import USERS as KEYSTONE_USERS
    from tests.functional.keystone import keystone_sections

    svc = ServiceProcess(tmp_path).configure(**keystone_sections(keystone)).start()
    try:
        refused = httpx.post(f"{svc.url}/ui/login", data={
            "user": "op-reader", "password": "wrong", "project": "admin"})
        assert refused.status_code == 401 and "set-cookie" not in refused.headers
        resp = httpx.post(f"{svc.url}/ui/login", data={
            "user": "op-reader", "password": KEYSTONE_USERS["op-reader"][0],
            "project": "admin"})
        assert resp.status_code == 303, resp.text
        with httpx.Client(base_url=f"{svc.url}/ui") as client:
            client.cookies.set("ironsight_session", resp.cookies["ironsight_session"],
                               path="/ui/")
            page = client.get("/nodes")
        assert page.status_code == 200
        assert 'id="whoami">op-reader<' in page.text and "role-reader" in page.text
        assert 'id="actions"' not in page.text
    finally:
        svc.stop()


def rows(page: httpx.Response) -> set[str]:
    return set(re.findall(r'data-uuid="([^"]+)"', page.text))


def owned_by(lab: Lab, project: str) -> set[str]:
    with lab.api() as api:
        found = api.get("/v1/nodes", params={"owner": project, "limit": "1000"}).json()
    return {n["uuid"] for n in found["nodes"]}


def test_a_project_user_lists_only_the_nodes_its_project_owns(lab: Lab) -> None:
    owned = lab.make_node(owner=PROJECT)
    leased = lab.make_node(lessee=PROJECT)
    with logged_in(lab, TENANT) as client:
        page = client.get("/nodes")
    assert page.status_code == 200
    assert owned["uuid"] in rows(page) and leased["uuid"] not in rows(page)
    assert rows(page) == owned_by(lab, PROJECT)


def test_a_project_users_expression_cannot_widen_the_node_list(lab: Lab) -> None:
    lab.make_node(owner=PROJECT)
    with logged_in(lab, TENANT) as client:
        page = client.get("/nodes", params={"where": "false) || (true"})
    assert page.status_code == 200
    assert "where: Syntax error" in page.text
    assert rows(page) == owned_by(lab, PROJECT)


def test_a_project_user_gets_no_page_of_the_whole_fleet(lab: Lab) -> None:
    with logged_in(lab, TENANT) as client:
        nodes, board, inbox = (client.get(p) for p in ("/nodes", "/board", "/discovery"))
        resolve = client.post("/discovery/conflicts/1", data={
            "csrf": csrf_of(client), "resolution": "ignore"})
    assert board.status_code == 403 and "act for project" in board.text
    assert inbox.status_code == 403 and resolve.status_code == 403
    assert "/ui/board" not in nodes.text and "/ui/discovery" not in nodes.text


def test_a_project_user_reads_a_leased_nodes_summary_but_not_its_hardware(lab: Lab) -> None:
    leased = lab.make_node(lessee=PROJECT)
    with logged_in(lab, TENANT) as client:
        summary = client.get(f"/nodes/{leased['uuid']}")
        cpu = client.get(f"/nodes/{leased['uuid']}", params={"tab": "cpu"})
        raw = client.get(f"/nodes/{leased['uuid']}/document.json")
    assert summary.status_code == 200
    assert 'id="tab-cpu"' not in summary.text and 'id="download"' not in summary.text
    assert cpu.status_code == 403 and raw.status_code == 403
    assert "leases it" in cpu.text


def test_a_project_user_reads_its_own_nodes_hardware_and_not_anothers_node(lab: Lab) -> None:
    owned = lab.make_node(owner=PROJECT)
    other = lab.make_node(owner="another-project")
    with logged_in(lab, TENANT) as client:
        cpu = client.get(f"/nodes/{owned['uuid']}", params={"tab": "cpu"})
        foreign = client.get(f"/nodes/{other['uuid']}")
    assert cpu.status_code == 200
    assert foreign.status_code == 404


def test_a_project_users_bulk_action_on_all_that_match_touches_only_its_nodes(
        lab: Lab) -> None:
    mine = lab.make_node(owner=PROJECT)
    other = lab.make_node(owner="another-project")
    with logged_in(lab, TENANT) as client:
        # a project's member may set maintenance on what it owns (Ironic's
        # baremetal:node:set_maintenance), not traits (its owner's admin only)
        form = {"csrf": csrf_of(client), "action": "maintenance_on", "scope": "matching",
                "reason": "tenant bulk", "f_driver": "fake-hardware"}
        confirm = client.post("/nodes/bulk", data=form)
        count = re.search(r'id="confirm-count">(\d+)<', confirm.text)
        assert count is not None, confirm.text
        assert int(count.group(1)) == len(owned_by(lab, PROJECT))
        resp = client.post("/nodes/bulk/run", data={**form, "expected": count.group(1)})
    assert resp.status_code == 200, resp.text
    assert lab.node(mine["uuid"])["maintenance"] is True
    assert lab.node(other["uuid"])["maintenance"] is False


def test_a_copy_of_a_logged_out_session_cookie_is_refused(lab: Lab) -> None:
    with logged_in(lab, "ops") as client:
        cookie = client.cookies["ironsight_session"]
        token = csrf_of(client)
        assert client.post("/logout", data={"csrf": token}).status_code == 303
    with httpx.Client(base_url=lab.ui, cookies={"ironsight_session": cookie}) as copy:
        page = copy.get("/nodes")
        form = copy.post("/nodes/bulk/run", data={
            "csrf": token, "action": "maintenance_on", "scope": "selected", "expected": "1",
            "node": "00000000-0000-0000-0000-000000000000"})
    assert page.status_code == 303 and page.headers["location"].startswith("/ui/login")
    assert form.status_code == 401


def test_a_logout_ends_that_session_only(lab: Lab) -> None:
    with logged_in(lab, "ops") as first, logged_in(lab, "ops") as second:
        assert first.post("/logout", data={"csrf": csrf_of(first)}).status_code == 303
        assert second.get("/nodes").status_code == 200
