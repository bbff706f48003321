"""The lab's nodes in the bare-metal API: enrol a VM, ask for a provision action, wait.

The lab is a user of the API like any other, so it goes through the operator client
(`ironsight.client`) and its one wait loop. The API's refusals become `LabError`, which
`ironsight lab up`, the tests and the benchmarks report as they report the lab's own.
"""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ironsight.client.http import ApiClient, ClientError, node_path
from ironsight.client.wait import Node, NodeWatch, Poller, wait_for_nodes
from ironsight.lab.hypervisor import LIBVIRT_URI, SSH_PORT, SSH_USER
from ironsight.lab.network import LabNetwork
from ironsight.lab.state import NS_BMC_ADDRESS, REDFISH_DRIVER, LabError, LabVm


@contextlib.contextmanager
def _refused(action: str) -> Iterator[None]:
    try:
        yield
    except ClientError as exc:
        raise LabError(f"{action}: {exc}") from None


@dataclass(frozen=True)
class RedfishAccess:
    """The lab's Redfish BMC as the conductor (in the namespace) reaches it."""

    url: str
    ca_file: Path


def static_network_data(vm: LabVm, net: LabNetwork) -> dict[str, Any]:
    """Ironic's network_data for a virtual-media VM: a static address on the lab bridge,
    below dnsmasq's range (hosts .20 + its number), so that it never asks discoverd's DHCP."""
    network = ipaddress.ip_interface(net.ipv4).network
    number = int(vm.spec.mac.replace(":", "")[-4:], 16)
    address = network[20 + number]
    if number < 1 or 20 + number >= 100:
        raise LabError(f"{vm.spec.name}: no static address for MAC {vm.spec.mac} below the "
                       "lab's DHCP range")
    return {"links": [{"id": "lab0", "type": "phy", "ethernet_mac_address": vm.spec.mac}],
            "networks": [{"id": "lab-ipv4", "link": "lab0", "type": "ipv4",
                          "ip_address": str(address), "netmask": str(network.netmask),
                          "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0",
                                      "gateway": net.address}]}],
            "services": []}


def enroll(api: ApiClient, vm: LabVm, user: str, password: str,
           ssh_key: str | None = None, redfish: RedfishAccess | None = None,
           network: LabNetwork | None = None) -> str:
    """The node of a VM, with its PXE port and in driver_info its BMC (IPMI, or for a
    redfish VM the lab's Redfish BMC), or for a pxe_ssh domain its hypervisor's SSH login
    (`ssh_key`: the private key's text); a virtual-media VM's boot_interface and static
    network_data (`network`: the lab's); returns its UUID."""
    if vm.driver == REDFISH_DRIVER:
        if redfish is None:
            raise LabError(f"{vm.spec.name} is a redfish VM, but no Redfish BMC runs")
        info: dict[str, Any] = {
            "redfish_address": redfish.url,
            "redfish_system_id": f"/redfish/v1/Systems/{vm.spec.system_uuid}",
            "redfish_username": user, "redfish_password": password,
            "redfish_verify_ca": str(redfish.ca_file)}
    elif vm.under_libvirt:
        if ssh_key is None:
            raise LabError(f"{vm.spec.name} is a libvirt domain, but no hypervisor runs")
        info = {"ssh_address": "127.0.0.1", "ssh_port": SSH_PORT, "ssh_username": SSH_USER,
                "ssh_key_contents": ssh_key, "ssh_virt_type": "virsh",
                "ssh_vm_name": vm.spec.name, "ssh_libvirt_uri": LIBVIRT_URI}
    else:
        info = {"ipmi_address": NS_BMC_ADDRESS, "ipmi_port": vm.bmc_port,
                "ipmi_username": user, "ipmi_password": password}
    with _refused(f"enrolling {vm.spec.name}"):
        body: dict[str, Any] = {"name": vm.spec.name, "driver": vm.driver,
                                "driver_info": info}
        if vm.boot_interface:
            body["boot_interface"] = vm.boot_interface
        if vm.virtual_media:
            body["network_data"] = static_network_data(vm, network or LabNetwork())
        node = api.post("/v1/nodes", body)
        api.post("/v1/ports", {"address": vm.spec.mac, "node_uuid": node["uuid"]})
    return str(node["uuid"])


def provision(api: ApiClient, node: str, target: str) -> None:
    with _refused(f"{target} {node}"):
        api.put(node_path(node, "states", "provision"), {"target": target})


def wait_states(api: ApiClient, nodes: Iterable[str], wanted: set[str], timeout: float, *,
                failed: set[str] | None = None,
                settled: Callable[[Node], bool] | None = None,
                poll: float = 0.5) -> dict[str, Node]:
    """Poll until every node is in one of `wanted` (and `settled`); fail at once when one
    reaches a `failed` state, or at the deadline, naming the nodes, states and errors.
    Returns the nodes' whole documents."""
    watch = NodeWatch.provision(*sorted(wanted), failed_states=frozenset(failed or ()),
                                settled=settled, fields=None)
    with _refused("waiting for nodes"):
        outcome = wait_for_nodes(api, list(nodes), watch, timeout, Poller(interval=poll),
                                 stop_on_failure=True)
    if outcome.failed:
        name = outcome.failed[0]
        doc = outcome.last[name]
        raise LabError(f"node {name} is {doc['provision_state']}: {doc.get('last_error')}")
    if outcome.timed_out:
        states = {name: (outcome.last[name]["provision_state"],
                         outcome.last[name].get("last_error")) for name in outcome.timed_out}
        raise LabError(f"nodes not {'/'.join(sorted(wanted))} after {timeout:.0f} s: "
                       f"{states}")
    return {name: outcome.last[name] for name in outcome.reached}
