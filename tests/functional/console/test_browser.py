"""The console in a real browser (headless Chromium, conftest.py): what an operator does with
it, page by page. Every test also fails on any JavaScript error in the browser console.

With IRONSIGHT_UI_SCREENSHOTS=DIR, the tests that show a main page save its screenshot
there (docs/ui.md's are made so: see docs/ui.md)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect
from tests.functional.security import USERS

from .lab import Lab

SCREENSHOTS = os.environ.get("IRONSIGHT_UI_SCREENSHOTS")
LIVE_WITHIN_MS = 5000  # issue 32: a step change shows within 5 s


def screenshot(page: Page, name: str) -> None:
    if SCREENSHOTS:
        page.set_viewport_size({"width": 1400, "height": 800})
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=False)


def log_in(page: Page, lab: Lab, user: str, then: str = "/nodes") -> None:
    page.goto(lab.ui + then)
    expect(page.locator("#login-form")).to_be_visible()
    page.fill("#user", user)
    page.fill("#password", USERS[user][0])
    page.click("#login")
    expect(page.locator("#whoami")).to_have_text(user)


def test_a_user_logs_in_sees_the_fleet_and_logs_out(page: Page, lab: Lab) -> None:
    page.goto(lab.ui + "/nodes")
    screenshot(page, "login")
    page.fill("#user", "admin")
    page.fill("#password", USERS["admin"][0])
    page.click("#login")
    expect(page.locator("#whoami")).to_have_text("admin")
    expect(page.locator("tr[data-uuid]")).not_to_have_count(0)
    page.click("#logout")
    expect(page.locator("#login-form")).to_be_visible()
    page.goto(lab.ui + "/nodes")
    expect(page.locator("#login-form")).to_be_visible()


def test_a_wrong_password_stays_on_the_login_form_with_the_reason(page: Page,
                                                                  lab: Lab) -> None:
    page.goto(lab.ui + "/login")
    page.fill("#user", "admin")
    page.fill("#password", "wrong")
    page.click("#login")
    expect(page.locator("#login-error")).to_have_text("Wrong user name or password.")


# the login page's 401 is logged by Chromium as a failed resource load
test_a_wrong_password_stays_on_the_login_form_with_the_reason = pytest.mark.allow_js_errors(
    "401")(test_a_wrong_password_stays_on_the_login_form_with_the_reason)


def test_a_reader_is_shown_no_action_buttons(page: Page, lab: Lab) -> None:
    log_in(page, lab, "viewer")
    expect(page.locator("tr[data-uuid]")).not_to_have_count(0)
    expect(page.locator("#actions")).to_have_count(0)
    expect(page.locator("#bulk-selected")).to_have_count(0)
    page.goto(lab.ui + "/discovery")
    expect(page.locator("#approve")).to_have_count(0)


def test_the_server_refuses_a_form_forged_by_a_reader(page: Page, lab: Lab) -> None:
    node = lab.make_node()
    log_in(page, lab, "viewer")
    token = page.locator("input[name=csrf]").first.get_attribute("value")
    assert token
    resp = page.request.post(lab.ui + "/nodes/bulk/run", form={
        "csrf": token, "action": "maintenance_on", "scope": "selected", "expected": "1",
        "node": node["uuid"]})
    assert resp.status == 403
    assert lab.node(node["uuid"])["maintenance"] is False


def test_filters_by_state_and_by_a_hardware_expression_and_keeps_them_in_the_url(
        page: Page, lab: Lab) -> None:
    log_in(page, lab, "viewer")
    page.fill("#f-where", "hardware.gpu_count >= 4 && hardware.memory_gib >= 256.0")
    page.click("#apply")
    expect(page.locator("#matched")).to_have_text("2")
    names = page.locator("tr[data-uuid] td.col-name").all_inner_texts()
    assert sorted(names) == ["gpu-1", "gpu-2"]
    expect(page.locator("tr[data-uuid] td.col-memory")).to_have_text(["512.0", "512.0"])
    expect(page.locator("tr[data-uuid] td.col-vendor").first).to_have_text("Dell Inc.")
    assert "where=hardware.gpu_count" in page.url
    screenshot(page, "fleet-filtered")
    page.goto(page.url)  # the URL alone gives the same view
    expect(page.locator("#matched")).to_have_text("2")
    page.goto(lab.ui + "/nodes?min_cpus=2&max=1&vendor=ACME")
    expect(page.locator("tr[data-uuid] td.col-name")).to_have_text(["small-1"])
    page.select_option("#f-state", "enroll")
    page.fill("#f-vendor", "")
    page.fill("#f-cpus", "")
    page.click("#apply")
    expect(page.locator("tr[data-uuid]")).to_have_count(0)


def test_columns_can_be_chosen_and_sorting_is_by_a_column(page: Page, lab: Lab) -> None:
    log_in(page, lab, "viewer", "/nodes?min_cpus=1&sort=memory&desc=1")
    first = page.locator("tr[data-uuid] td.col-name").first
    expect(first).to_have_text(re.compile(r"gpu-\d"))
    page.click("details.columns summary")
    page.check("input.column-choice[value=gpus]")
    page.uncheck("input.column-choice[value=driver]")
    page.click("#apply")
    expect(page.locator("th", has_text="GPUs")).to_have_count(1)
    expect(page.locator("td.col-driver")).to_have_count(0)
    assert "columns=" in page.url


def test_a_bulk_inspect_shows_each_nodes_result(page: Page, lab: Lab) -> None:
    nodes = [lab.make_node(name=f"bulk-{i}", owner="bulk-team") for i in (1, 2)]
    unmanaged = lab.make_node(name="bulk-3", owner="bulk-team", managed=False)
    log_in(page, lab, "ops", "/nodes?owner=bulk-team")
    expect(page.locator("#matched")).to_have_text("3")
    page.select_option("#bulk-action", "inspect")
    page.click("#bulk-matching")
    expect(page.locator("#confirm-count")).to_have_text("3")
    screenshot(page, "bulk-confirm")
    page.click("#confirm")
    expect(page.locator("#results tbody tr")).to_have_count(3)
    for node in nodes:
        expect(page.locator(f"#results tr[data-uuid='{node['uuid']}'] td.message")
               ).to_have_text("done")
    # an enroll node cannot be inspected: its own error, the others are not held back
    refused = page.locator(f"#results tr[data-uuid='{unmanaged['uuid']}']")
    expect(refused).to_have_class("failed")
    expect(refused.locator("td.message")).to_contain_text("inspect")
    screenshot(page, "bulk-result")
    for node in nodes:
        lab.wait_state(node["uuid"], "inspect wait")
        lab.report(node)
        lab.wait_state(node["uuid"], "manageable")


def test_the_node_page_shows_each_hardware_tab(page: Page, lab: Lab) -> None:
    log_in(page, lab, "viewer", "/nodes/gpu-1")
    expect(page.locator("#node-name")).to_have_text("gpu-1")
    expect(page.locator("#panel-summary")).to_contain_text("fake-hardware")
    screenshot(page, "node-summary")
    checks = {"cpu": "Xeon Gold", "memory": "512.0", "disks": "DISK1", "nics": "25000",
              "pci": "0000:41:00.0", "bmc": "198.18.7.1", "attempts": "finished",
              "history": "", "rules": "console lab: more than 4 GiB", "diff": ""}
    for tab, text in checks.items():
        page.click(f"#tab-{tab}")
        expect(page.locator(f"#panel-{tab}")).to_be_visible()
        if text:
            expect(page.locator(f"#panel-{tab}")).to_contain_text(text)
    page.click("#tab-disks")
    screenshot(page, "node-disks")
    with page.expect_download() as download:
        page.click("#download")
    assert download.value.suggested_filename == "gpu-1.json"


def test_the_changes_tab_shows_what_differs_between_two_inspections(page: Page,
                                                                   lab: Lab) -> None:
    node = lab.make_node(name="grown-1")
    lab.inspect(node, memory_mb=8192)
    lab.inspect(node, memory_mb=16384)
    log_in(page, lab, "viewer", f"/nodes/{node['uuid']}?tab=diff")
    row = page.locator("#changes tr", has_text="memory.physical_mb")
    expect(row.locator("td")).to_have_text(["memory.physical_mb", "8192", "16384"])
    expect(page.locator("#changes tr", has_text="cpu.model_name")).to_have_count(0)


def test_comparing_nodes_marks_what_differs(page: Page, lab: Lab) -> None:
    log_in(page, lab, "viewer", "/nodes?min_cpus=1")
    for name in ("gpu-1", "small-1"):
        page.locator("tr", has_text=name).locator("input.pick").check()
    page.click("#compare")
    expect(page.locator("#comparison thead th")).to_have_count(3)
    expect(page.locator("#comparison tr.differs", has_text="CPUs")).to_have_count(1)
    expect(page.locator("#comparison tr:not(.differs)", has_text="Driver")).to_have_count(1)
    screenshot(page, "compare")


def test_a_running_inspection_shows_its_steps_live(page: Page, lab: Lab) -> None:
    node = lab.make_node(name="live-1")
    log_in(page, lab, "viewer", f"/nodes/{node['uuid']}")
    expect(page.locator("#live-state")).to_have_text("manageable")
    lab.provision(node["uuid"], "inspect")
    expect(page.locator("#live-state")).to_have_text("inspect wait", timeout=LIVE_WITHIN_MS)
    expect(page.locator("#live-step")).to_have_text(
        re.compile(r"inspection #1: [a-z_]+ \(running\)"), timeout=LIVE_WITHIN_MS)
    page.goto(lab.ui + "/board")
    expect(page.locator(f"#attempts tr[data-uuid='{node['uuid']}']")).to_have_count(1)
    screenshot(page, "board")
    page.goto(lab.ui + f"/nodes/{node['uuid']}")
    lab.report(node, cpus=16)
    expect(page.locator("#live-state")).to_have_text("manageable", timeout=LIVE_WITHIN_MS)
    expect(page.locator("#live-step")).to_contain_text("success", timeout=LIVE_WITHIN_MS)


def test_the_board_refreshes_itself(page: Page, lab: Lab) -> None:
    node = lab.make_node(name="board-1")
    log_in(page, lab, "viewer", "/board")
    row = page.locator(f"#attempts tr[data-uuid='{node['uuid']}']")
    expect(row).to_have_count(0)
    lab.provision(node["uuid"], "inspect")
    expect(row).to_have_count(1, timeout=LIVE_WITHIN_MS)
    lab.wait_state(node["uuid"], "inspect wait")
    lab.report(node)
    expect(row).to_have_count(0, timeout=LIVE_WITHIN_MS)


def test_the_discovery_inbox_approves_a_pending_machine(page: Page, lab: Lab) -> None:
    with lab.api() as api:
        resp = api.post("/v1/discovery/nodes", json={
            "node": {"driver": "fake-hardware", "name": "found-1"},
            "macs": ["52:54:00:d1:00:01"], "status": "pending"})
        assert resp.status_code == 201, resp.text
        found = resp.json()["node"]["uuid"]
    log_in(page, lab, "admin", "/discovery")
    row = page.locator(f"#discovered tr[data-uuid='{found}']")
    expect(row).to_have_count(1)
    screenshot(page, "discovery")
    row.locator("input.pick").check()
    page.click("#approve")
    expect(page.locator("#done")).to_have_text("Approved 1 node(s)")
    expect(row).to_have_count(0)
    page.click("#status-approved")
    expect(row).to_have_count(1)


def test_the_discovery_inbox_rejects_a_pending_machine(page: Page, lab: Lab) -> None:
    with lab.api() as api:
        resp = api.post("/v1/discovery/nodes", json={
            "node": {"driver": "fake-hardware", "name": "found-2"},
            "macs": ["52:54:00:d1:00:02"], "status": "pending"})
        assert resp.status_code == 201, resp.text
        found = resp.json()["node"]["uuid"]
    log_in(page, lab, "admin", "/discovery")
    page.locator(f"#discovered tr[data-uuid='{found}'] input.pick").check()
    page.click("#reject")
    expect(page.locator("#done")).to_have_text("Rejected 1 node(s)")
    page.click("#status-rejected")
    expect(page.locator(f"#discovered tr[data-uuid='{found}']")).to_have_count(1)


def test_the_discovery_inbox_shows_the_manifest_machines_still_missing(page: Page,
                                                                      lab: Lab) -> None:
    csv = "serial,name,macs\nLATE-0001,rack9-u01,52:54:00:d3:00:01\n"
    resp = httpx.post(f"{lab.svc.di_url}/v1/discovery/manifest", json={"csv": csv},
                      auth=("admin", USERS["admin"][0]))
    assert resp.status_code in (200, 201), resp.text
    log_in(page, lab, "viewer", "/discovery")
    expect(page.locator("#missing")).to_contain_text("LATE-0001")
    expect(page.locator("#manifest-summary")).to_contain_text("1 missing")


def test_the_discovery_inbox_resolves_a_conflict(page: Page, lab: Lab) -> None:
    with lab.api() as api:  # enrolled with its BMC only: a report naming that BMC conflicts
        resp = api.post("/v1/nodes", json={"driver": "fake-hardware", "name": "bmc-only",
                                           "driver_info": {"ipmi_address": "198.18.9.9"}})
        assert resp.status_code == 201, resp.text
        known = resp.json()["uuid"]
    lab.report({"mac": "52:54:00:d2:00:01", "name": "stranger"}, expect=404,
               bmc="198.18.9.9", serial="STRANGER")
    log_in(page, lab, "admin", "/discovery")
    conflict = page.locator("article.conflict", has_text=known)
    expect(conflict).to_have_count(1)
    conflict.locator("select.resolution").select_option("ignore")
    conflict.locator("button.resolve").click()
    expect(page.locator("#done")).to_contain_text("resolved")
    expect(page.locator("article.conflict", has_text=known)).to_have_count(0)
    with httpx.Client(base_url=lab.svc.di_url, auth=("bm-svc", USERS["bm-svc"][0])) as di:
        every = di.get("/v1/discovery/conflicts", params={"all": "true"}).json()["conflicts"]
    (mine,) = [c for c in every if known in str(c)]
    assert mine["resolved_by"] == "bm-svc for admin"  # the service's user, for the console's


def test_noauth_needs_no_login(tmp_path: Path, page: Page) -> None:
    from tests.functional.conftest import ServiceProcess

    svc = ServiceProcess(tmp_path).start()
    try:
        httpx.post(f"{svc.url}/v1/nodes", json={"driver": "fake-hardware", "name": "open-1"},
                   headers={"X-OpenStack-Ironic-API-Version": "latest"})
        page.goto(svc.url + "/ui/")
        expect(page.locator("#whoami")).to_have_text("anonymous")
        expect(page.locator("#logout")).to_have_count(0)
        # discoverd runs in the same process and [discoverd] service_url is unset: the
        # console finds it there
        expect(page.locator("tr[data-uuid] td.col-name")).to_have_text(["open-1"])
        expect(page.locator("#problem")).to_have_count(0)
    finally:
        svc.stop()
