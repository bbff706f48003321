"""One Redfish power action, part by part: the redfish driver against sushy-tools' emulator in
front of a real libvirtd (the lab's hypervisor in a network namespace of this bench's own),
over TLS with a CA of its own and HTTP basic credentials, as the functional tests run it.

For each of `--cycles` power-on / power-off cycles of a small domain (128 MiB, no disk:
SeaBIOS then iPXE, which finds no network), it times:

    connect        a new sushy client: GET the service root (and, `auto`, try a session)
    get system     GET the ComputerSystem (every driver call starts with it)
    read power     the whole `get_power_state` on a kept connection (GET system)
    reset          POST ComputerSystem.Reset (On, ForceOff)
    until reported the reset's POST returned -> the BMC reports the new state (polls)
    whole action   `set_power_state` as the conductor calls it (reset + polls)

Needs root and libvirt (scripts/install-deps.sh) and the emulator's venv
(scripts/ensure-sushy-tools.sh .state).

    .venv/bin/python bench/bench_redfish.py [--cycles 10]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import sushy

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.redfish import Connections, RedfishPower, parse_redfish_info
from ironsight.common import config
from ironsight.lab import hypervisor, network, redfish_bmc
from ironsight.lab.hypervisor import Hypervisor
from ironsight.lab.network import LabNetwork
from ironsight.lab.pki import make_pki
from ironsight.lab.qemu import VmFiles, VmSpec
from ironsight.lab.redfish_bmc import RedfishEmulator

PASSWORD = "bench-" + secrets.token_hex(6)


def ms(values: list[float]) -> str:
    return (f"p50 {statistics.median(values) * 1000:7.1f} ms   min {min(values) * 1000:7.1f}"
            f"   max {max(values) * 1000:7.1f}")


async def run(cycles: int, root: Path) -> None:
    net = LabNetwork(namespace=f"isb-{secrets.token_hex(3)}", bridge="br-b")
    network.create(net, taps=["tapb1"])
    hv = Hypervisor(root / "hypervisor")
    pid = hv.start(net.namespace)
    emulator: RedfishEmulator | None = None
    try:
        name = f"bench-{uuid.uuid4().hex[:6]}"
        spec = VmSpec(name=name, mac="52:54:00:be:00:01", tap="tapb1", memory_mb=128,
                      disk_gb=0)
        (root / "domains").mkdir()
        hv.define(spec, VmFiles(root / "domains", name))
        pki = make_pki(root / "pki")
        emulator = RedfishEmulator(root / "redfish", hv.dirs.uri, users={"admin": PASSWORD},
                                   cert=pki.cert_file, key=pki.key_file).start()
        conf = config.load()
        node = NodeContext(uuid="bench", driver="redfish", driver_info={
            "redfish_address": emulator.url, "redfish_username": "admin",
            "redfish_password": PASSWORD, "redfish_verify_ca": str(pki.ca_file),
            "redfish_system_id": emulator.system_id(hv.virsh("domuuid", name).strip())})
        info = parse_redfish_info(node, conf)
        power = RedfishPower(conf)
        parts: dict[str, list[float]] = {k: [] for k in (
            "connect", "get system", "read power", "reset", "until reported",
            "whole action")}
        for _ in range(cycles):
            for target, reset in ((states.POWER_ON, "on"), (states.POWER_OFF, "off")):
                began = time.perf_counter()
                client = Connections(conf)._connect(info)
                parts["connect"].append(time.perf_counter() - began)
                began = time.perf_counter()
                system = client.get_system(info.system_id)
                parts["get system"].append(time.perf_counter() - began)
                began = time.perf_counter()
                await power.get_power_state(node)
                parts["read power"].append(time.perf_counter() - began)
                # the driver's whole action, then its parts by hand in the other direction
                began = time.perf_counter()
                await power.set_power_state(node, target, timeout=60)
                parts["whole action"].append(time.perf_counter() - began)
                back = states.POWER_OFF if target == states.POWER_ON else states.POWER_ON
                began = time.perf_counter()
                system.reset_system({"on": sushy.ResetType.FORCE_OFF,
                                     "off": sushy.ResetType.ON}[reset])
                posted = time.perf_counter()
                parts["reset"].append(posted - began)
                while await power.get_power_state(node) != back:
                    await asyncio.sleep(0.05)
                parts["until reported"].append(time.perf_counter() - posted)
                await power.set_power_state(node, target, timeout=60)
        print(f"redfish power actions: {cycles} cycles, sushy-tools emulator (libvirt) over "
              "TLS, basic auth")
        for part, values in parts.items():
            print(f"  {part:15s} n={len(values):3d}  {ms(values)}")
        await power.set_power_state(node, states.POWER_OFF, timeout=60)
    finally:
        if emulator is not None:
            emulator.stop()
        Hypervisor.stop(pid)
        network.destroy(net)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=10)
    args = parser.parse_args()
    why = hypervisor.unavailable() or redfish_bmc.unavailable()
    if why:
        print(f"cannot run: {why}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-redfish-") as tmp:
        asyncio.run(run(args.cycles, Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
