"""python-ironic-inspector-client's OSC plugin (`openstack baremetal introspection ...`),
unmodified, with its DEFAULT settings (only `--inspector-url` and no authentication, as on
loopback), against a running `ironsight serve`: the rule commands against discoverd's
`/v1/rules`, and the introspection commands (issue 12 item 3) on fake-hardware nodes, whose
ramdisk report is posted by the test (tokenless reports are allowed here).

`openstack` (python-openstackclient) lives in a venv of its own, created by `make test`
(scripts/ensure-osc.sh); the tests skip without it. Each command takes ~2 s (OSC's start-up).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import ServiceProcess
from ..discoverd.test_inspector_client import Machine

ROOT = Path(__file__).resolve().parents[3]
VENV = Path(os.environ.get("IRONSIGHT_TEST_OSC_VENV") or ROOT / ".state" / "osc-venv")
OPENSTACK = VENV / "bin" / "openstack"
INSPECTOR_RULE = {"description": "big memory",
                  "conditions": [{"op": "ge", "field": "memory_mb", "value": 16000}],
                  "actions": [{"action": "set-capability", "name": "big_memory",
                               "value": "yes"}]}
YAML_RULE = """\
description: x86 nodes
conditions:
  - {op: eq, field: "data://cpus", value: 16}
actions:
  - {action: add-trait, name: CUSTOM_SIXTEEN}
"""


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    if not OPENSTACK.exists():
        pytest.skip(f"no openstack CLI at {OPENSTACK}: `make test` creates its venv "
                    "(scripts/ensure-osc.sh .state), or set IRONSIGHT_TEST_OSC_VENV")
    svc = ServiceProcess(tmp_path_factory.mktemp("inspector-osc"),
                         extra_conf="[introspection]\nironic_retry_interval = 0.05\n"
                                    "allow_tokenless_reports = true\n")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


def osc(service: ServiceProcess, *args: str, check: bool = True
        ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OS_", "INSPECTOR_"))}
    proc = subprocess.run([str(OPENSTACK), "--os-auth-type", "none", "--inspector-url",
                           service.di_url, "baremetal", "introspection", *args],
                          capture_output=True, text=True, timeout=60, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"openstack baremetal introspection {' '.join(args)} failed: "
                             f"{proc.stderr}")
    return proc


def osc_json(service: ServiceProcess, *args: str) -> Any:
    return json.loads(osc(service, *args, "-f", "json").stdout)


@pytest.fixture(scope="module")
def bm(service: ServiceProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=30,
                      headers={"X-OpenStack-Ironic-API-Version": "latest"}) as c:
        yield c


@pytest.fixture(scope="module")
def di(service: ServiceProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.di_url, timeout=30) as c:
        yield c


@pytest.fixture
def rules_file(tmp_path: Path) -> Path:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([INSPECTOR_RULE]))
    return path


@pytest.fixture
def imported(service: ServiceProcess, rules_file: Path, di: httpx.Client
             ) -> Iterator[dict[str, Any]]:
    (row,) = osc_json(service, "rule", "import", str(rules_file))
    yield dict(row)
    di.delete(f"/v1/rules/{row['UUID']}")


def wait_status(di: httpx.Client, node: str, *, finished: bool = True, after: Any = None
                ) -> dict[str, Any]:
    """discoverd's status of the node once `finished` is as asked (and, with `after`, its
    `finished_at` differs from that one); polled over HTTP, not with the slower CLI."""
    deadline = time.monotonic() + 30
    while True:
        status = dict(di.get(f"/v1/introspection/{node}").json())
        done = status["finished"] == finished and (after is None
                                                   or status["finished_at"] != after)
        if done or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def introspected(service: ServiceProcess, bm: httpx.Client, di: httpx.Client) -> Machine:
    """A node introspected through the client: started, reported, finished."""
    machine = Machine(bm)
    osc(service, "start", machine.uuid)
    resp = di.post("/v1/continue", json=machine.report())
    assert resp.status_code == 200, resp.text
    assert wait_status(di, machine.uuid)["error"] is None
    return machine


# --- rules ---------------------------------------------------------------------------------------


def test_rule_import_creates_the_rules_of_a_json_file(imported: dict[str, Any]) -> None:
    assert imported["Description"] == "big memory"


def test_rule_import_reads_yaml(service: ServiceProcess, tmp_path: Path,
                                di: httpx.Client) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text(YAML_RULE)
    (row,) = osc_json(service, "rule", "import", str(path))
    try:
        assert row["Description"] == "x86 nodes"
    finally:
        di.delete(f"/v1/rules/{row['UUID']}")


def test_rule_list_lists_them(service: ServiceProcess, imported: dict[str, Any]) -> None:
    rows = osc_json(service, "rule", "list")
    assert {"UUID": imported["UUID"], "Description": "big memory"} in rows


def test_rule_show_gives_the_rule_with_the_inspectors_defaults(
        service: ServiceProcess, imported: dict[str, Any]) -> None:
    shown = osc_json(service, "rule", "show", imported["UUID"])
    assert shown["uuid"] == imported["UUID"]
    (condition,) = shown["conditions"]
    assert (condition["field"], condition["multiple"], condition["invert"]) == (
        "memory_mb", "any", False)
    assert shown["actions"] == INSPECTOR_RULE["actions"]


def test_rule_delete_deletes_it(service: ServiceProcess, imported: dict[str, Any]) -> None:
    osc(service, "rule", "delete", imported["UUID"])
    assert osc(service, "rule", "show", imported["UUID"], check=False).returncode != 0


def test_rule_purge_deletes_every_rule(service: ServiceProcess, rules_file: Path) -> None:
    osc(service, "rule", "import", str(rules_file))
    osc(service, "rule", "purge")
    assert osc_json(service, "rule", "list") == []


def test_an_imported_rule_applies_when_a_node_is_processed(
        service: ServiceProcess, imported: dict[str, Any], bm: httpx.Client,
        di: httpx.Client) -> None:
    machine = introspected(service, bm, di)  # memory_mb 65536 >= 16000
    node = bm.get(f"/v1/nodes/{machine.uuid}").json()
    assert "big_memory:yes" in node["properties"].get("capabilities", "")


# --- introspection, with the client's defaults ---------------------------------------------------


def test_start_starts_an_introspection(service: ServiceProcess, bm: httpx.Client,
                                       di: httpx.Client) -> None:
    machine = Machine(bm)
    osc(service, "start", machine.uuid)
    status = wait_status(di, machine.uuid, finished=False)
    assert (status["finished"], status["error"]) == (False, None)


def test_status_shows_a_finished_introspection(service: ServiceProcess, bm: httpx.Client,
                                               di: httpx.Client) -> None:
    machine = introspected(service, bm, di)
    status = osc_json(service, "status", machine.uuid)
    assert (status["finished"], status["error"]) == (True, None)


def test_list_lists_the_introspections(service: ServiceProcess, bm: httpx.Client,
                                       di: httpx.Client) -> None:
    machine = introspected(service, bm, di)
    rows = osc_json(service, "list")
    assert machine.uuid in [row["UUID"] for row in rows]


def test_data_save_writes_the_processed_data(service: ServiceProcess, bm: httpx.Client,
                                             di: httpx.Client, tmp_path: Path) -> None:
    machine = introspected(service, bm, di)
    path = tmp_path / "data.json"
    osc(service, "data", "save", "--file", str(path), machine.uuid)
    data = json.loads(path.read_text())
    assert data["inventory"]["memory"]["physical_mb"] == 65536


def test_abort_ends_a_waiting_introspection(service: ServiceProcess, bm: httpx.Client,
                                            di: httpx.Client) -> None:
    machine = Machine(bm)
    osc(service, "start", machine.uuid)
    osc(service, "abort", machine.uuid)
    status = wait_status(di, machine.uuid)
    assert status["finished"] is True and status["error"]


def test_reprocess_processes_the_stored_data_again(service: ServiceProcess, bm: httpx.Client,
                                                   di: httpx.Client) -> None:
    machine = introspected(service, bm, di)
    before = di.get(f"/v1/introspection/{machine.uuid}").json()["finished_at"]
    osc(service, "reprocess", machine.uuid)
    status = wait_status(di, machine.uuid, after=before)
    assert (status["finished_at"] != before, status["error"]) == (True, None)
