"""The service the console tests look at: `ironsight serve` (both services, in its own
process, as the browser tests need: see conftest.py) with http_basic users of every role and
a fleet of fake-hardware nodes, some inspected. Their ramdisk is the test: fake-hardware
nodes are inspected through discoverd, and the test posts the report an agent would post."""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from tests.functional.conftest import ServiceProcess
from tests.functional.security import USERS, auth_sections, write_htpasswd
from tests.functional.waits import until

H = {"X-OpenStack-Ironic-API-Version": "latest"}
# a member acting for one project (http_basic_projects), beside USERS's whole-fleet users
TENANT, PROJECT = "tenant", "proj-ui"
LAB_USERS = {**USERS, TENANT: ("tenant-pass-6e21", "member")}
GIB = 1024**3
_SEQ = itertools.count(1)


@dataclass
class Lab:
    svc: ServiceProcess

    @property
    def ui(self) -> str:
        return self.svc.url + "/ui"

    @property
    def svc_user(self) -> tuple[str, str]:
        """The bare-metal service's user of discoverd (an admin there, see start)."""
        return "bm-svc", LAB_USERS["bm-svc"][0]

    def api(self, user: str = "admin") -> httpx.Client:
        return httpx.Client(base_url=self.svc.url, headers=H, auth=(user, LAB_USERS[user][0]),
                            timeout=30)

    def node(self, ident: str) -> dict[str, Any]:
        with self.api() as api:
            resp = api.get(f"/v1/nodes/{ident}")
            assert resp.status_code == 200, resp.text
            return dict(resp.json())

    def make_node(self, *, name: str | None = None, managed: bool = True,
                  **fields: Any) -> dict[str, Any]:
        seq = next(_SEQ)
        with self.api() as api:
            resp = api.post("/v1/nodes", json={"driver": "fake-hardware",
                                               "name": name or f"ui-{seq}", **fields})
            assert resp.status_code == 201, resp.text
            node = dict(resp.json())
            resp = api.post("/v1/ports", json={"node_uuid": node["uuid"],
                                               "address": mac(seq)})
            assert resp.status_code == 201, resp.text
            node["mac"] = mac(seq)
            if managed:
                self.provision(node["uuid"], "manage")
                self.wait_state(node["uuid"], "manageable")
        return node

    def provision(self, uuid: str, target: str) -> None:
        with self.api() as api:
            resp = api.put(f"/v1/nodes/{uuid}/states/provision", json={"target": target})
            assert resp.status_code == 202, resp.text

    def wait_state(self, uuid: str, state: str, timeout: float = 20) -> dict[str, Any]:
        return dict(until(lambda: (n := self.node(uuid))["provision_state"] == state and n,
                          timeout, f"node {uuid} in {state}"))

    def report(self, node: dict[str, Any], expect: int = 200, **hardware: Any) -> None:
        """The report of the node's ramdisk, posted to discoverd as an agent posts it."""
        resp = httpx.post(f"{self.svc.di_url}/v1/continue", json=payload(node, **hardware),
                          timeout=30)
        assert resp.status_code == expect, resp.text

    def inspect(self, node: dict[str, Any], **hardware: Any) -> dict[str, Any]:
        """A whole inspection: started through the API, the report posted, finished."""
        self.provision(node["uuid"], "inspect")
        self.wait_state(node["uuid"], "inspect wait")
        self.report(node, **hardware)
        return self.wait_state(node["uuid"], "manageable")


def mac(seq: int) -> str:
    return f"52:54:00:c0:{seq >> 8 & 0xff:02x}:{seq & 0xff:02x}"


def payload(node: dict[str, Any], *, cpus: int = 8, memory_mb: int = 16384,
            disks_gib: tuple[int, ...] = (480, 1920), vendor: str = "ACME",
            product: str = "Test", serial: str = "SN1", gpus: int = 0,
            bmc: str = "198.18.7.1") -> dict[str, Any]:
    disks = [{"name": f"/dev/sd{chr(97 + i)}", "model": f"DISK{i}", "serial": f"D{i:04d}",
              "size": gib * GIB, "rotational": i > 0, "vendor": "ACME"}
             for i, gib in enumerate(disks_gib)]
    pci = [{"bus": f"0000:{0x41 + i:02x}:00.0", "vendor_id": "10de", "product_id": "20b5",
            "class": "030200", "revision": "a1"} for i in range(gpus)]
    return {"inventory": {
        "interfaces": [{"name": "eno1", "mac_address": node["mac"], "ipv4_address": "10.0.0.9",
                        "has_carrier": True, "vendor": "0x8086", "speed_mbps": 25000}],
        "cpu": {"model_name": "Xeon Gold", "frequency": "2100.000", "count": cpus,
                "architecture": "x86_64", "flags": ["fpu", "vmx"], "socket_count": 2},
        "memory": {"total": memory_mb * 1024 * 1024, "physical_mb": memory_mb},
        "disks": disks, "bmc_address": bmc,
        "system_vendor": {"product_name": product, "serial_number": serial,
                          "manufacturer": vendor},
        "boot": {"current_boot_mode": "uefi", "pxe_interface": node["mac"]},
        "hostname": node["name"]},
        "pci_devices": pci, "root_disk": disks[0],
        "boot_interface": f"01-{node['mac'].replace(':', '-')}", "error": None}


def start(state_dir: Path, **sections: dict[str, str]) -> Lab:
    svc = ServiceProcess(state_dir)
    htpasswd = write_htpasswd(state_dir / "htpasswd", LAB_USERS)
    sections = auth_sections(htpasswd, LAB_USERS)
    sections["DEFAULT"]["http_basic_projects"] = f"{TENANT}:{PROJECT}"
    # the console resolves discovery conflicts as the bare-metal service's user of
    # discoverd, which needs discoverd's admin role for it (docs/ui.md)
    roles = sections["DEFAULT"]["http_basic_roles"]
    sections["DEFAULT"]["http_basic_roles"] = roles.replace("bm-svc:member", "bm-svc:admin")
    svc.configure(**sections)
    svc.configure(discoverd={"enabled": "true", "service_url": svc.di_url + "/v1"},
                  introspection={"allow_tokenless_reports": "true"},
                  auto_discovery={"enabled": "true", "probe_bmc": "false"},
                  # every test logs in from 127.0.0.1, many a minute (the limit's own test:
                  # tests/unit/baremetal/console/test_app.py)
                  console={"login_attempts_per_minute": "10000"})
    svc.configure(**sections)
    svc.start()
    return Lab(svc)


@contextlib.contextmanager
def logged_in(lab: Lab, user: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=lab.ui, follow_redirects=False, timeout=30) as client:
        resp = client.post("/login", data={"user": user, "password": LAB_USERS[user][0],
                                           "next": "/ui/nodes"})
        assert resp.status_code == 303, resp.text
        # the cookie is Secure, which a browser sends to a loopback address over plain HTTP
        # (a secure context) but httpx's cookie jar does not: given as it would be sent
        client.cookies.clear()
        client.cookies.set("ironsight_session", resp.cookies["ironsight_session"], path="/ui/")
        yield client


def csrf_of(client: httpx.Client) -> str:
    page = client.get("/nodes")
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)
