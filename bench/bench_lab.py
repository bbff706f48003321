"""Real inspections in the QEMU lab: where the time goes, for 1, 3 and 6 VMs at once.

For each size a fresh lab (`ironsight.lab`) is brought up, every node is inspected at once
through the bare-metal API, and each VM's time from the inspect request to `manageable` is
split along its path:

    request -> power on          bare-metal history "Power state is now power on"
            -> first lease       discoverd's log: dnsmasq's first DHCPACK for the MAC: the
                                 firmware's boot (SeaBIOS + iPXE's ROM, or OVMF's own PXE)
            -> ramdisk fetched   the initramfs sent to that IP: discoverd's access log
                                 (GET /pxe/initramfs, iPXE) or its TFTP log (GRUB)
            -> lease (ramdisk)   the first DHCPACK after it (the ramdisk's udhcpc)
            -> callback          the report arrives: discoverd's first GET of the node on
                                 the bare-metal API after that lease (access log)
            -> node updated      history "Node updated: properties"
            -> power off         history: the event ending in "power off"
            -> manageable        history "... to manageable"

The service runs with `[DEFAULT] debug = true` for the access log (a little extra CPU).
Needs root, QEMU, dnsmasq and ipmitool, like `ironsight lab up`.

    .venv/bin/python bench/bench_lab.py [--sizes 1,3,6] [--ramdisk-dir DIR]
    .venv/bin/python bench/bench_lab.py --sizes 2 --ssh 1   # an IPMI VM beside a pxe_ssh one
    .venv/bin/python bench/bench_lab.py --sizes 3 --firmware bios,uefi,uefi-secureboot
    .venv/bin/python bench/bench_lab.py --sizes 1 --firmware uefi \
        --conf pxe.uefi_pxe_bootfile_name=snponly.efi      # UEFI PXE by iPXE (HTTP)

With `--ssh N` the last N VMs of each lab are libvirt domains of the lab's hypervisor,
enrolled as pxe_ssh (powered by `virsh` over SSH) instead of VMs behind virtual BMCs. With
`--firmware LIST` the VMs' firmware cycles through LIST (`ironsight lab up --firmware`), and
a summary per firmware gives the median request -> manageable and the firmware's share of
it (power on -> first lease).
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ironsight.client.http import node_path
from ironsight.lab.lifecycle import running
from ironsight.lab.network import LabNetwork
from ironsight.lab.nodes import provision, wait_states
from ironsight.lab.state import Lab, LabOptions, default_vms

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 300.0
STEPS = ("power on", "first lease", "ramdisk fetched", "lease (ramdisk)", "callback",
         "node updated", "power off", "manageable")

_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")
_LEASE = re.compile(r"PXE: (?P<mac>[0-9a-f:]{17}) got the address (?P<ip>\S+)")
# a power change is its own event, or (since the node changes of issue 13) the end of the
# provision state change it came with: "... (wait): boot device set ...: power on"
_HISTORY_MARKERS = (("power on", re.compile(r"Power state is now power on|: power on$")),
                    ("node updated", re.compile(r"Node updated: properties")),
                    ("power off", re.compile(r"Power state is now power off|: power off$")),
                    ("manageable", re.compile(r"from inspect wait to manageable")))
_ACCESS = re.compile(r'uvicorn\.access: (?P<ip>[\d.]+):\d+ - "(?P<method>\w+) (?P<path>[^\s?]+)')
_TFTP = re.compile(r"PXE: (?P<ip>\S+) fetched (?P<file>\S+) over TFTP")


@dataclass
class Timeline:
    name: str
    driver: str
    firmware: str
    uuid: str
    mac: str
    requested: float
    at: dict[str, float] = field(default_factory=dict)

    def split(self) -> list[float | None]:
        """Seconds spent in each step (None when an event was not seen)."""
        out: list[float | None] = []
        previous: float | None = self.requested
        for step in STEPS:
            now = self.at.get(step)
            out.append(now - previous if now is not None and previous is not None else None)
            previous = now
        return out

    @property
    def total(self) -> float | None:
        end = self.at.get("manageable")
        return end - self.requested if end is not None else None


def _log_time(line: str) -> float | None:
    match = _LOG_TIME.match(line)
    if not match:
        return None
    stamp = time.mktime(time.strptime(match.group(1), "%Y-%m-%d %H:%M:%S"))
    return stamp + int(match.group(2)) / 1000


def _history_time(value: str) -> float:
    return dt.datetime.fromisoformat(value).timestamp()


def _from_history(lab: Lab, timeline: Timeline) -> None:
    with lab.client() as api:
        events = api.get(node_path(timeline.name, "history"))["history"]
    for event in events:
        when = _history_time(event["created_at"])
        if when < timeline.requested:
            continue
        text = event["event"]
        for step, marker in _HISTORY_MARKERS:
            if marker.search(text) and step not in timeline.at:
                timeline.at[step] = when


def _from_service_log(lab: Lab, timelines: dict[str, Timeline]) -> None:
    """Leases by MAC, the initramfs sent to each VM's address (HTTP or TFTP), the first lease
    after it (the ramdisk's), then discoverd's first request for the node once the ramdisk
    has its address."""
    by_mac = {t.mac: t for t in timelines.values()}
    by_uuid = {t.uuid: t for t in timelines.values()}
    by_ip: dict[str, Timeline] = {}
    for line in lab.serve_log.read_text(errors="replace").splitlines():
        when = _log_time(line)
        if when is None:
            continue
        if (lease := _LEASE.search(line)) and lease["mac"] in by_mac:
            timeline = by_mac[lease["mac"]]
            if when < timeline.requested:
                continue
            by_ip[lease["ip"]] = timeline
            timeline.at.setdefault("first lease", when)
            if "ramdisk fetched" in timeline.at:
                timeline.at.setdefault("lease (ramdisk)", when)
        elif (sent := _TFTP.search(line)) and sent["ip"] in by_ip:
            if sent["file"] == "pxe/initramfs":
                by_ip[sent["ip"]].at.setdefault("ramdisk fetched", when)
        elif access := _ACCESS.search(line):
            if access["ip"] in by_ip and access["path"] == "/pxe/initramfs":
                by_ip[access["ip"]].at.setdefault("ramdisk fetched", when)
            node = access["path"].removeprefix("/v1/nodes/")
            if access["method"] == "GET" and node in by_uuid:
                timeline = by_uuid[node]
                if "lease (ramdisk)" in timeline.at:
                    timeline.at.setdefault("callback", when)


def run_size(count: int, ramdisk_dir: Path, work: Path, ssh: int = 0,
             firmware: tuple[str, ...] = ("bios",),
             conf: dict[str, dict[str, str]] | None = None) -> tuple[float, list[Timeline]]:
    options = LabOptions(
        state_dir=work / f"lab-{count}",
        vms=default_vms(count, ssh=min(ssh, count), firmware=firmware),
        network=LabNetwork(namespace="ironsight-bench"), ramdisk_dir=ramdisk_dir,
        api_port=0, discoverd_port=0, bmc_same_ports=False,
        extra_conf={"DEFAULT": {"debug": "true"}, **(conf or {})})
    with running(options, log=lambda line: print("  " + line, file=sys.stderr)) as lab:
        names = [vm.spec.name for vm in lab.vms]
        timelines: dict[str, Timeline] = {}
        began = time.time()
        with lab.client() as api:
            for vm in lab.vms:
                timelines[vm.spec.name] = Timeline(vm.spec.name, vm.driver, vm.spec.firmware,
                                                   lab.state["nodes"][vm.spec.name],
                                                   vm.spec.mac, time.time())
                provision(api, vm.spec.name, "inspect")
            wait_states(api, names, {"manageable"}, TIMEOUT, failed={"inspect failed"},
                        settled=lambda doc: doc["power_state"] == "power off", poll=0.2)
        wall = time.time() - began
        for timeline in timelines.values():
            _from_history(lab, timeline)
        _from_service_log(lab, timelines)
    return wall, list(timelines.values())


def _cell(value: float | None) -> str:
    return f"{value:6.2f}" if value is not None else "     -"


def print_table(count: int, wall: float, timelines: list[Timeline]) -> None:
    print(f"\n{count} VM{'s' if count > 1 else ''} at once: all manageable after {wall:.1f} s "
          "(seconds per step, from the previous one)")
    header = ["VM", "driver", "firmware", *STEPS, "total"]
    widths = [max(6, len(h)) for h in header]
    widths[1] = max(widths[1], *(len(t.driver) for t in timelines))
    widths[2] = max(widths[2], *(len(t.firmware) for t in timelines))
    print("  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    for timeline in timelines:
        cells = [timeline.name, timeline.driver, timeline.firmware,
                 *(_cell(v) for v in timeline.split()), _cell(timeline.total)]
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
    totals = [t.total for t in timelines if t.total is not None]
    if totals:
        print(f"  request -> manageable: min {min(totals):.1f} s, median "
              f"{statistics.median(totals):.1f} s, max {max(totals):.1f} s")
    for kind in dict.fromkeys(t.firmware for t in timelines):
        done = [t for t in timelines if t.firmware == kind and t.total is not None
                and "power on" in t.at and "first lease" in t.at]
        if done:
            total = statistics.median(t.total or 0.0 for t in done)
            boot = statistics.median(t.at["first lease"] - t.at["power on"] for t in done)
            print(f"  {kind}: request -> manageable median {total:.1f} s, of it the "
                  f"firmware (power on -> first lease) {boot:.1f} s ({boot / total:.0%})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,3,6", help="VMs at once, comma-separated")
    parser.add_argument("--ramdisk-dir", type=Path, default=REPO / ".state" / "ramdisk-cache")
    parser.add_argument("--ssh", type=int, default=0,
                        help="of each lab, this many VMs (the last) are pxe_ssh domains")
    parser.add_argument("--firmware", default="bios",
                        help="the VMs' firmware, cycled: bios,uefi,uefi-secureboot,...")
    parser.add_argument("--conf", action="append", default=[], metavar="SECTION.OPTION=VALUE",
                        help="service configuration on top of the lab's, e.g. "
                             "pxe.uefi_pxe_bootfile_name=snponly.efi (iPXE for UEFI PXE)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    conf: dict[str, dict[str, str]] = {}
    for item in args.conf:
        key, _, value = item.partition("=")
        section, _, option = key.partition(".")
        conf.setdefault(section, {})[option] = value
    with tempfile.TemporaryDirectory(prefix="ironsight-bench-lab-") as tmp:
        for count in sizes:
            print(f"lab of {count} VMs:", file=sys.stderr)
            wall, timelines = run_size(count, args.ramdisk_dir, Path(tmp), args.ssh,
                                       tuple(args.firmware.split(",")), conf)
            print_table(count, wall, timelines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
