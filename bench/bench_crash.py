"""Inspections that survive crashes (issue 10): N inspections while each service is killed
(-9) again and again, or restarted one replica at a time; count how they end.

The bare-metal service and discoverd run as two processes (`serve --only ...`), so a kill
takes down the only instance of that service and nothing else can finish its work until it
is restarted (at once, by this script). Nodes are `fake`; each node's "ramdisk" posts its
report (retrying, as the agent does) whenever discoverd waits for one, once per boot (a
restarted introspection boots the node again, and its ramdisk reports again). Inspections
are started in waves, so that the kills land on every step: starting, booting, waiting,
processing, powering off, the status poll.

    .venv/bin/python bench/bench_crash.py --nodes 100 --kills 20            # kill -9
    .venv/bin/python bench/bench_crash.py --nodes 200 --kills 10 --restart  # SIGTERM, start
    .venv/bin/python bench/bench_crash.py --nodes 100 --kills 20 --power-delay 1  # BMC-like

At the end, every node must have left `inspecting` / `inspect wait` (none stuck): the script
prints how many are `manageable` (with the properties of their report), how many
`inspect failed` and why, and the kills it made, with the state of the batch at each.
"""

from __future__ import annotations

import argparse
import collections
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_api import free_port, start_service
from bench_discoverd import report
from pgstats import fresh_databases

BM = {"X-OpenStack-Ironic-API-Version": "1.115"}


def mac(i: int, nic: int) -> str:  # the MACs report(i) gives (bench_discoverd)
    return f"02:{nic:02x}:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}:01"


class Services:
    """The two processes, and how to kill and restart each."""

    def __init__(self, state: Path, db_url: str | None) -> None:
        self.state, self.db_url, di_url = state, None, None
        if db_url:  # each service in a fresh database of its own on that server
            self.db_url, di_url = fresh_databases(db_url, ["ironsight_crash_bm",
                                                           "ironsight_crash_di"])
        self.bm_port, self.di_port = free_port(), free_port()
        both = f"connection = {di_url}\n" if di_url else ""
        self.extra = (f"[introspection]\nport = {self.di_port}\n{both}"
                      f"ironic_url = http://127.0.0.1:{self.bm_port}\n"
                      "ironic_retry_interval = 0.2\n"
                      "allow_tokenless_reports = true\n"
                      f"[discoverd]\nenabled = true\n"
                      f"service_url = http://127.0.0.1:{self.di_port}/v1\n"
                      "start_grace_period = 5\n[processing]\nadd_ports = all\n")
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, which: str) -> None:
        port = self.bm_port if which == "baremetal" else self.di_port
        self.procs[which] = start_service(self.state, self.bm_port, self.db_url, self.extra,
                                          only=which, wait_port=port)

    def kill(self, which: str, graceful: bool) -> None:
        proc = self.procs[which]
        proc.send_signal(signal.SIGTERM if graceful else signal.SIGKILL)
        proc.wait(60)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
                proc.wait(30)


def request(method: str, url: str, body: Any = None, *, ok: tuple[int, ...] = (200, 202),
            attempts: int = 120) -> Any:
    """As a client that retries through a restart (connection errors, 5xx, a locked node)."""
    for _ in range(attempts):
        try:
            resp = httpx.request(method, url, json=body, headers=BM, timeout=30)
        except httpx.TransportError:
            time.sleep(0.25)
            continue
        if resp.status_code in ok:
            return resp.json() if resp.content else None
        if resp.status_code < 500 and resp.status_code != 409:
            return resp
        time.sleep(0.25)
    raise SystemExit(f"{method} {url}: no answer after {attempts} attempts")


class Ramdisks(threading.Thread):
    """Each node's ramdisk: posts its report when discoverd waits for it, once per boot."""

    def __init__(self, svc: Services, uuids: list[str]) -> None:
        super().__init__(daemon=True)
        self.svc, self.uuids, self.done = svc, uuids, threading.Event()
        self.posted: set[tuple[str, str]] = set()  # (uuid, the introspection's started_at)
        self.reports = 0

    def run(self) -> None:
        index = {u: i for i, u in enumerate(self.uuids)}
        base = f"http://127.0.0.1:{self.svc.di_port}/v1"
        while not self.done.is_set():
            for first in range(0, len(self.uuids), 100):
                chunk = ",".join(self.uuids[first:first + 100])
                try:
                    found = httpx.get(f"{base}/introspection?uuid={chunk}", timeout=10).json()
                except (httpx.HTTPError, ValueError):
                    continue
                for status in found.get("introspection", []):
                    boot = (status["uuid"], status["started_at"])
                    if status["state"] == "waiting" and boot not in self.posted:
                        self.posted.add(boot)
                        request("POST", f"{base}/continue", report(index[status["uuid"]]),
                                ok=(200, 400, 404))
                        self.reports += 1
            self.done.wait(0.3)


def summary(bm: str) -> dict[str, dict[str, Any]]:
    body = request("GET", f"{bm}/v1/nodes?fields=uuid,provision_state,last_error,properties,"
                          "power_state&limit=1000")
    return {n["uuid"]: n for n in body["nodes"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--kills", type=int, default=20, help="kills of each service")
    parser.add_argument("--restart", action="store_true",
                        help="SIGTERM and start again (a rolling restart), not kill -9")
    parser.add_argument("--db-url", default=None,
                        help="a PostgreSQL server for both services (default SQLite)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--power-delay", type=float, default=0.0,
                        help="seconds each power action of a node takes (driver_info "
                             "fake_power_delay): real BMCs take seconds, and a conductor "
                             "then holds the node's lock that long, for kills to land on")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ironsight-crash-") as tmp:
        svc = Services(Path(tmp), args.db_url)
        for which in ("baremetal", "discoverd"):
            svc.start(which)
        bm = f"http://127.0.0.1:{svc.bm_port}"
        try:
            run(svc, bm, args, rng)
        finally:
            svc.stop()


def run(svc: Services, bm: str, args: argparse.Namespace, rng: random.Random) -> None:
    uuids = []
    for i in range(args.nodes):
        info = {"fake_power_delay": args.power_delay} if args.power_delay else {}
        node = request("POST", f"{bm}/v1/nodes", {"driver": "fake", "name": f"c{i}",
                                                  "driver_info": info}, ok=(201,))
        for nic in (0, 1):
            request("POST", f"{bm}/v1/ports", {"node_uuid": node["uuid"],
                                               "address": mac(i, nic)}, ok=(201,))
        request("PUT", f"{bm}/v1/nodes/{node['uuid']}/states/provision", {"target": "manage"})
        uuids.append(node["uuid"])
    while any(n["provision_state"] != "manageable" for n in summary(bm).values()):
        time.sleep(0.2)
    ramdisks = Ramdisks(svc, uuids)
    ramdisks.start()
    kills: list[tuple[float, str, dict[str, int]]] = []
    plan = [w for w in ("baremetal", "discoverd") for _ in range(args.kills)]
    rng.shuffle(plan)
    began = time.monotonic()
    size = max(1, -(-len(uuids) // max(1, len(plan))))  # a wave in flight at every kill
    waves = [uuids[i:i + size] for i in range(0, len(uuids), size)]
    for step in range(max(len(plan), len(waves))):
        if step < len(waves):
            for uuid in waves[step]:
                request("PUT", f"{bm}/v1/nodes/{uuid}/states/provision", {"target": "inspect"})
        time.sleep(rng.uniform(0.0, 0.8))  # anywhere in the wave's start, boot, processing
        if step < len(plan):
            states = collections.Counter(n["provision_state"] for n in summary(bm).values())
            svc.kill(plan[step], args.restart)
            kills.append((time.monotonic() - began, plan[step], dict(states)))
            svc.start(plan[step])
    deadline = time.monotonic() + 600
    while True:
        nodes = summary(bm)
        busy = [u for u in uuids if nodes[u]["provision_state"] in ("inspecting",
                                                                     "inspect wait")]
        if not busy or time.monotonic() > deadline:
            break
        time.sleep(1)
    ramdisks.done.set()
    total = time.monotonic() - began
    ended = collections.Counter(nodes[u]["provision_state"] for u in uuids)
    good = [u for u in uuids if nodes[u]["provision_state"] == "manageable"
            and nodes[u]["properties"].get("cpus") == 40
            and nodes[u]["power_state"] == "power off"]
    how = "SIGTERM + start" if args.restart else "kill -9"
    print(f"nodes={args.nodes} kills={len(kills)} ({how}, {args.kills} of each service) "
          f"db={'postgresql' if args.db_url else 'sqlite'} seed={args.seed}")
    print(f"  ended: {dict(ended)}; manageable with their data and powered off: {len(good)}; "
          f"stuck: {len(busy)}; in {total:.0f} s; reports posted: {ramdisks.reports}")
    for uuid in uuids:
        if nodes[uuid]["provision_state"] != "manageable":
            print(f"  {uuid}: {nodes[uuid]['provision_state']}: {nodes[uuid]['last_error']}")
    print("  kills (s since the first inspect, service, node states then):")
    for at, which, states in kills:
        print(f"    {at:6.1f}  {which:9}  {states}")


if __name__ == "__main__":
    main()
