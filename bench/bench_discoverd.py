"""discoverd benchmark (issue 3): the whole introspection of N `fake` nodes.

Starts `ironsight serve` (both services, one process) on a fresh state directory. Set-up, not
timed: N fake nodes, each with a BMC address and one port (its PXE NIC), managed. Timed:
start every introspection through discoverd (8 clients), wait until all are `waiting`, POST
an agent-format report for each (8 clients; two NICs, so discoverd creates the second port),
wait until all are `finished`; then check every node has cpus/cpu_arch/memory_mb/local_gb
and 2 ports.

    .venv/bin/python bench/bench_discoverd.py [--nodes 200] [--db-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import benchauth
import loadgen
from bench_api import free_port, proc_stat, start_service

from ironsight.client.wait import Poller, wait_for_introspection
from ironsight.discoverd import client as discoverd

BM = {"X-OpenStack-Ironic-API-Version": "1.115"}
# Seconds between status polls while waiting, as in the Ironic measurement we compare with
# (Ironic 39 polled every 0.25 s there; bench/RESULTS.md); a tighter poll mostly measures
# the poll.
POLL = 0.25


def mac(i: int, nic: int) -> str:
    return f"02:{nic:02x}:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}:01"


def bmc(i: int) -> str:
    return f"198.18.{i >> 8 & 255}.{i & 255}"


def report(i: int) -> dict[str, Any]:
    return {
        "inventory": {
            "interfaces": [
                {"name": "eno1", "mac_address": mac(i, 0), "ipv4_address": "10.0.0.9",
                 "has_carrier": True},
                {"name": "eno2", "mac_address": mac(i, 1), "ipv4_address": None,
                 "has_carrier": False}],
            "cpu": {"model_name": "Xeon", "count": 40, "architecture": "x86_64",
                    "flags": ["vmx", "aes"], "frequency": "2100"},
            "memory": {"total": 206158430208, "physical_mb": 196608},
            "disks": [{"name": "/dev/sda", "size": 480103981056, "rotational": False}],
            "bmc_address": bmc(i), "bmc_v6address": "::/0",
            "system_vendor": {"product_name": "R640", "serial_number": f"SN{i}",
                              "manufacturer": "Dell Inc."},
            "boot": {"current_boot_mode": "uefi", "pxe_interface": mac(i, 0)}},
        "root_disk": {"name": "/dev/sda", "size": 480103981056},
        "boot_interface": "01-" + mac(i, 0).replace(":", "-"), "error": None}


def wait_states(port: int, uuids: list[str], wanted: str, timeout: float) -> None:
    """Poll discoverd's batched status (one request per 100 pending nodes, every POLL s) until
    every introspection is `wanted` ("finished": finished without an error). A node discoverd
    does not know yet is waited for: the bare-metal service may still be starting it."""
    with discoverd.Client(f"http://127.0.0.1:{port}", credentials=benchauth.CREDENTIALS) as api:
        outcome = wait_for_introspection(api, uuids, timeout, Poller(interval=POLL),
                                         wanted=None if wanted == "finished" else wanted,
                                         unknown_pending=True, stop_on_failure=True)
    if outcome.failed:
        raise SystemExit(f"introspection failed: {outcome.last.get(outcome.failed[0])}")
    if outcome.timed_out:
        raise SystemExit(f"{len(outcome.timed_out)} introspections not {wanted} in {timeout} s")


async def setup(bm_port: int, nodes: int) -> list[str]:
    by_index: dict[int, str] = {}
    stamp = time.time_ns()

    def created(resp: loadgen.Response) -> None:
        assert resp.status == 201, resp.body
        node = resp.json()
        by_index[int(node["name"].split("-")[0][1:])] = node["uuid"]

    await loadgen.run("127.0.0.1", bm_port, BM, nodes, 8, lambda i: (
        "POST", "/v1/nodes", {"driver": "fake", "name": f"b{i}-{stamp}",
                              "driver_info": {"ipmi_address": bmc(i)}}), created)
    uuids = [by_index[i] for i in range(nodes)]
    await loadgen.run("127.0.0.1", bm_port, BM, nodes, 8, lambda i: (
        "POST", "/v1/ports", {"address": mac(i, 0), "node_uuid": uuids[i]}))
    await loadgen.run("127.0.0.1", bm_port, BM, nodes, 8, lambda i: (
        "PUT", f"/v1/nodes/{uuids[i]}/states/provision", {"target": "manage"}))
    return uuids


async def bench(bm_port: int, di_port: int, pid: int, nodes: int) -> dict[str, float]:
    uuids = await setup(bm_port, nodes)
    await asyncio.sleep(1)
    cpu0, _ = proc_stat(pid)
    t0 = time.perf_counter()

    def accepted(resp: loadgen.Response) -> None:
        assert resp.status == 202, resp.body

    await loadgen.run("127.0.0.1", di_port, {}, nodes, 8,
                      lambda i: ("POST", f"/v1/introspection/{uuids[i]}", None), accepted)
    await asyncio.to_thread(wait_states, di_port, uuids, "waiting", 60)
    t1 = time.perf_counter()

    def processed(resp: loadgen.Response) -> None:
        assert resp.status == 200, resp.body

    res = await loadgen.run("127.0.0.1", di_port, {}, nodes, 8,
                            lambda i: ("POST", "/v1/continue", report(i)), processed)
    await asyncio.to_thread(wait_states, di_port, uuids, "finished", 120)
    t2 = time.perf_counter()
    cpu1, rss = proc_stat(pid)
    await verify(bm_port, uuids)
    return {"total": t2 - t0, "start": t1 - t0, "callbacks": t2 - t1,
            "cb_p50": res.pct(0.5), "cb_p95": res.pct(0.95), "cpu": cpu1 - cpu0, "rss": rss}


async def verify(bm_port: int, uuids: list[str]) -> None:
    conn = loadgen.Connection("127.0.0.1", bm_port, BM)
    try:
        for uuid in uuids:
            node = (await conn.request("GET", f"/v1/nodes/{uuid}")).json()
            props = node["properties"]
            assert (props["cpus"], props["cpu_arch"], props["memory_mb"], props["local_gb"]) == (
                40, "x86_64", 196608, 446), props
            assert node["power_state"] == "power off", node["power_state"]
            ports = (await conn.request("GET", f"/v1/nodes/{uuid}/ports")).json()["ports"]
            assert len(ports) == 2, ports
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--db-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ironsight-bench-") as tmp:
        state = Path(tmp)
        bm_port, di_port = free_port(), free_port()
        extra = (os.environ.get("BENCH_EXTRA", "")
                 + f"[introspection]\nport = {di_port}\nironic_url = http://127.0.0.1:{bm_port}\n"
                 "ironic_retry_interval = 0.05\n"
                 "allow_tokenless_reports = true\n[processing]\nadd_ports = all\n")
        proc = start_service(state, bm_port, args.db_url, extra)
        try:
            time.sleep(1)
            r = asyncio.run(bench(bm_port, di_port, proc.pid, args.nodes))
        finally:
            proc.terminate()
            proc.wait(10)
            if os.environ.get("BENCH_KEEP_LOG"):
                (state / "service.log").rename(os.environ["BENCH_KEEP_LOG"])
    n = args.nodes
    print(f"nodes={n} db={'postgresql' if args.db_url else 'sqlite'}")
    per_node = r["total"] / n * 1000
    print(f"  total (start → all finished)   {r['total']:6.2f} s   ({per_node:.1f} ms/node)")
    print(f"    start all → all waiting       {r['start']:6.2f} s")
    print(f"    callbacks → all finished      {r['callbacks']:6.2f} s")
    print(f"  callback latency               p50 {r['cb_p50']:.1f} ms   p95 {r['cb_p95']:.1f} ms")
    cpu_node = r["cpu"] / n * 1000
    print(f"  server CPU                     {r['cpu']:6.2f} s   ({cpu_node:.1f} ms/node)")
    print(f"  RSS after                      {r['rss']:6.1f} MiB")


if __name__ == "__main__":
    main()
