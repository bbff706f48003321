"""Virtual media against PXE in the lab: request -> manageable for two Redfish VMs.

One lab (`ironsight.lab`) with two identical libvirt domains behind the lab's Redfish BMC
(1 vCPU, 1 GiB, 4 GiB disk, SeaBIOS): lab-1 boots the inspection ISO as a virtual CD
(`redfish-virtual-media`, static network_data), lab-2 PXE-boots through discoverd (`ipxe`).
They are inspected one at a time, alternating, `--rounds` times each (interleaved: this
machine is noisy), and each inspection is split along the node's history:

    request -> booted        the conductor's boot: for virtual media the ISO check (built
                             once, then cached), discoverd's token, the BMC's InsertMedia
                             (which downloads the image), the boot device, the reboot
            -> reported      "Node updated: properties": the ramdisk's report processed
                             (only when it changed a property: the first inspection)
            -> manageable    the power off and the eject (virtual media), the state change

The first round of virtual media also builds the ISO (if not cached): it is shown apart.
Needs root, QEMU, libvirt and the emulator's venv, like `ironsight lab up --redfish-nodes`.

    .venv/bin/python bench/bench_vmedia.py [--rounds 3] [--ramdisk-dir DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ironsight.client.http import node_path
from ironsight.lab.lifecycle import running
from ironsight.lab.network import LabNetwork
from ironsight.lab.nodes import provision, wait_states
from ironsight.lab.state import Lab, LabOptions, default_vms

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 300.0
STEPS = ("booted", "reported", "manageable")
MARKERS = (("booted", ": power on"), ("reported", "Node updated: properties"),
           ("manageable", "from inspect wait to manageable"))


def inspect_once(lab: Lab, name: str) -> dict[str, float]:
    """Seconds from the request to each step, from the node's history."""
    with lab.client() as api:
        began = time.time()
        provision(api, name, "inspect")
        wait_states(api, [name], {"manageable"}, TIMEOUT, failed={"inspect failed"},
                    settled=lambda doc: doc["power_state"] == "power off", poll=0.2)
        events = api.get(node_path(name, "history"))["history"]
    at: dict[str, float] = {}
    for event in events:
        when = dt.datetime.fromisoformat(event["created_at"]).timestamp()
        if when < began - 1:
            continue
        for step, marker in MARKERS:
            if marker in event["event"] and step not in at:
                at[step] = when - began
    return at


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ramdisk-dir", type=Path, default=REPO / ".state" / "ramdisk-cache")
    args = parser.parse_args()
    vms = default_vms(2, redfish=2)
    kinds = {vm.spec.name: vm.boot_interface or "" for vm in vms}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in kinds}
    with tempfile.TemporaryDirectory(prefix="bench-vmedia-") as work:
        options = LabOptions(state_dir=Path(work) / "lab", vms=vms,
                             network=LabNetwork(namespace="ironsight-bench"),
                             ramdisk_dir=args.ramdisk_dir, api_port=0, discoverd_port=0,
                             bmc_same_ports=False)
        with running(options, log=lambda line: print("  " + line, file=sys.stderr)) as lab:
            for round_ in range(args.rounds):
                for name in kinds:
                    at = inspect_once(lab, name)
                    results[name].append(at)
                    print(f"round {round_ + 1}: {name} ({kinds[name]}): " + ", ".join(
                        f"{s} {at[s]:.1f} s" for s in STEPS if s in at), file=sys.stderr)
    print(f"\nrequest -> step, seconds (median of rounds 2..{args.rounds}; round 1 apart)")
    print(f"{'boot interface':>24}  " + "  ".join(f"{s:>10}" for s in STEPS) + "   round 1")
    for name, runs in results.items():
        later = runs[1:] or runs
        cells = [statistics.median(found) if (found := [r[s] for r in later if s in r])
                 else float("nan") for s in STEPS]
        print(f"{kinds[name]:>24}  " + "  ".join(f"{c:10.1f}" for c in cells)
              + f"   {runs[0].get('manageable', float('nan')):6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
