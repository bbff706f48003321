"""Fleet queries (issue 31): ten reference CEL queries over N nodes with realistic inventories.

Starts `ironsight serve` (both services, one process, auto-discovery on so that one report per
machine creates its node and stores its inventory: fleetgen.py's machines, four models,
memory, GPUs, NICs with LLDP, disks, DIMMs), sets the traits of one node in three, then asks
each reference query `--runs` times through `POST /v1/fleet/query` (every page, 1,000 nodes a
page; each run with a comment of its own, so that every run evaluates the expression over the
whole fleet instead of reusing the previous run's answer) and checks that the answer is
exactly the set computed from the generator's facts. Timed: each query's latency (all its
pages); the first query of all separately (it builds the index: every node's document); the
drift of the whole fleet; then its export in each format (`GET /v1/fleet/export`, streamed;
every node checked to be in the NDJSON ones).

    .venv/bin/python bench/bench_fleet.py [--nodes 10000] [--runs 20] [--db-url URL]
        [--state DIR]   # keep the filled fleet there, and use it again next time
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import httpx
import loadgen
from bench_api import free_port, proc_stat, start_service
from bench_discoverd import BM, wait_states
from fleetgen import Facts, machine
from pgstats import fresh_databases

SWITCH = "rack007-tor-a.dc1.example.net"
QUERIES: list[tuple[str, str, Callable[[Facts], bool]]] = [
    ("memory >= 512 GiB", "hardware.memory_gib >= 512.0", lambda f: f.memory_gib >= 512),
    ("memory >= 1 TiB (raw)", "inventory.memory.physical_mb >= 1048576",
     lambda f: f.memory_gib >= 1024),
    ("an NVIDIA device", 'inventory.pci_devices.exists(d, d.vendor_id == "10de")',
     lambda f: "10de" in f.gpus),
    ("4 GPUs or more", "hardware.gpu_count >= 4", lambda f: len(f.gpus) >= 4),
    ("a 100 Gb/s NIC", "inventory.interfaces.exists(i, i.speed_mbps >= 100000)",
     lambda f: 100000 in f.nic_speeds),
    ("3.8 TB Intel NVMe", 'inventory.disks.exists(d, d.model.startsWith("INTEL SSDPF2") '
     "&& d.size >= 3000000000000)",
     lambda f: any(m.startswith("INTEL SSDPF2") and s >= 3 * 10**12 for m, s in f.disks)),
    ("LLDP switch", f'"{SWITCH}" in hardware.switches', lambda f: SWITCH in f.switches),
    ("trait", '"CUSTOM_GPU_POOL" in traits', lambda f: "CUSTOM_GPU_POOL" in f.traits),
    ("&& and !", 'hardware.memory_gib >= 1024.0 && hardware.gpu_count > 0 '
     '&& !("CUSTOM_GPU_POOL" in traits)',
     lambda f: f.memory_gib >= 1024 and bool(f.gpus) and "CUSTOM_GPU_POOL" not in f.traits),
    ("|| && !", '(hardware.vendor == "Dell Inc." || hardware.vendor == "Lenovo") '
     "&& hardware.disk_count >= 8 && !inventory.interfaces.exists(i, i.speed_mbps == 10000)",
     lambda f: f.vendor in ("Dell Inc.", "Lenovo") and len(f.disks) >= 8
     and 10000 not in f.nic_speeds),
]


async def discover(di_port: int, n: int) -> list[str]:
    created: dict[int, str] = {}

    def make(i: int) -> tuple[str, str, Any]:
        return "POST", "/v1/continue", machine(i)[0]

    def done(resp: loadgen.Response) -> None:
        assert resp.status == 200, resp.body
        created[len(created)] = resp.json()["uuid"]

    await loadgen.run("127.0.0.1", di_port, {}, n, 8, make, done)
    return list(created.values())


def serials(bm: httpx.Client) -> dict[str, int]:
    """uuid -> machine index, from the serial discovery recorded in each node's extra."""
    found: dict[str, int] = {}
    marker = None
    while True:
        params = {"limit": "1000", **({"marker": marker} if marker else {})}
        nodes = bm.get("/v1/nodes/detail", params=params).json()["nodes"]
        for node in nodes:
            found[node["uuid"]] = int(node["extra"]["discovery"]["serial"][2:])
        if len(nodes) < 1000:
            return found
        marker = nodes[-1]["uuid"]


async def set_traits(bm_port: int, by_index: dict[int, str], facts: dict[int, Facts]) -> None:
    chosen = [i for i in sorted(facts) if facts[i].traits]

    def make(k: int) -> tuple[str, str, Any]:
        i = chosen[k]
        return "PUT", f"/v1/nodes/{by_index[i]}/traits", {"traits": facts[i].traits}

    def done(resp: loadgen.Response) -> None:
        assert resp.status == 204, resp.body

    await loadgen.run("127.0.0.1", bm_port, BM, len(chosen), 8, make, done)


def ask(di: httpx.Client, where: str) -> set[str]:
    found: set[str] = set()
    marker = None
    while True:
        body = {"where": where, "limit": 1000, "fields": ["uuid"],
                **({"marker": marker} if marker else {})}
        resp = di.post("/v1/fleet/query", json=body)
        assert resp.status_code == 200, resp.text
        page = resp.json()
        assert page["errors"]["count"] == 0, page["errors"]
        found |= {n["uuid"] for n in page["nodes"]}
        marker = page.get("next_marker")
        if not marker:
            return found


EXPORTS = ("ndjson", "csv", "components", "netbox")


def export(di: httpx.Client, kind: str, n: int) -> tuple[float, int, int]:
    """Seconds to stream the whole fleet in `kind`, its bytes and rows; every node checked
    to be in it."""
    t = time.perf_counter()
    size = rows = 0
    seen: set[str] = set()
    with di.stream("GET", "/v1/fleet/export", params={"format": kind}) as resp:
        assert resp.status_code == 200, resp.read()
        for line in resp.iter_lines():
            size += len(line) + 1
            rows += 1
            if kind in ("ndjson", "components"):
                seen.add(json.loads(line)["uuid" if kind == "ndjson" else "node_uuid"])
    elapsed = time.perf_counter() - t
    if kind in ("ndjson", "components"):
        assert len(seen) == n, (kind, len(seen))
    return elapsed, size, rows


def run(bm_port: int, di_port: int, pid: int, n: int, runs: int,
        filled_before: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    if not filled_before:
        uuids = asyncio.run(discover(di_port, n))
        wait_states(di_port, uuids, "finished", 3600)
    filled = time.perf_counter() - t0
    facts = {i: machine(i)[1] for i in range(n)}
    bm = httpx.Client(base_url=f"http://127.0.0.1:{bm_port}", headers=BM, timeout=120)
    di = httpx.Client(base_url=f"http://127.0.0.1:{di_port}", timeout=120)
    by_uuid = serials(bm)
    assert len(by_uuid) == n, f"{len(by_uuid)} nodes, expected {n}"
    by_index = {i: u for u, i in by_uuid.items()}
    if not filled_before:
        asyncio.run(set_traits(bm_port, by_index, facts))
    _, rss_before = proc_stat(pid)
    if os.environ.get("BENCH_PAUSE"):  # attach a profiler to the service now
        time.sleep(float(os.environ["BENCH_PAUSE"]))
    t1 = time.perf_counter()
    ask(di, "true")
    cold = time.perf_counter() - t1
    _, rss_after = proc_stat(pid)
    out: dict[str, Any] = {"filled": filled, "cold": cold, "rss_before": rss_before,
                           "rss_after": rss_after, "queries": []}
    every: list[float] = []
    for name, where, truth in QUERIES:
        expected = {by_index[i] for i, f in facts.items() if truth(f)}
        times = []
        for k in range(runs):
            t = time.perf_counter()
            # a comment of its own each time: evaluated anew, never an answer kept from the
            # same expression's previous run
            got = ask(di, f"{where} // run {k}")
            times.append(time.perf_counter() - t)
            assert got == expected, (name, len(got), len(expected))
        every += times
        out["queries"].append((name, len(expected), statistics.median(times),
                               sorted(times)[max(0, int(len(times) * 0.95) - 1)]))
    every.sort()
    out["exports"] = [(kind, *export(di, kind, n)) for kind in EXPORTS]
    t = time.perf_counter()
    groups = di.get("/v1/fleet/drift").json()["groups"]
    out["drift"] = (time.perf_counter() - t, len(groups),
                    sum(g["nodes"] for g in groups), sum(len(g["drifted"]) for g in groups))
    assert out["drift"][2] == n, out["drift"]
    out["p50"] = statistics.median(every)
    out["p95"] = every[max(0, int(len(every) * 0.95) - 1)]
    cpu, _ = proc_stat(pid)
    out["cpu"] = cpu
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--db-url", default=None)
    parser.add_argument("--state", type=Path, default=None,
                        help="keep the filled fleet in this directory (SQLite) and use it "
                             "again on the next run instead of filling it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ironsight-bench-") as tmp:
        state = args.state or Path(tmp)
        state.mkdir(parents=True, exist_ok=True)
        marker = state / f"filled-{args.nodes}"
        filled_before = args.state is not None and not args.db_url and marker.exists()
        bm_port, di_port = free_port(), free_port()
        bm_url = di_conn = None
        if args.db_url:
            bm_url, di_url = fresh_databases(args.db_url, ["ironsight_bench_bm",
                                                           "ironsight_bench_di"])
            di_conn = f"connection = {di_url}\n"
        extra = (f"[introspection]\nport = {di_port}\nironic_url = http://127.0.0.1:{bm_port}\n"
                 f"{di_conn or ''}ironic_retry_interval = 0.05\nramdisk_rate_limit = 0\n"
                 f"[auto_discovery]\nenabled = true\nprobe_bmc = false\n"
                 f"rate_limit = {args.nodes}\nmax_pending = {args.nodes}\n"
                 "[processing]\nadd_ports = all\n")
        proc = start_service(state, bm_port, bm_url, extra)
        try:
            time.sleep(1)
            r = run(bm_port, di_port, proc.pid, args.nodes, args.runs, filled_before)
            marker.touch()
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"nodes={args.nodes} db={'postgresql' if args.db_url else 'sqlite'} "
          f"runs={args.runs} per query (every page, 1,000 a page; exact sets checked)")
    if not filled_before:
        print(f"  fleet filled (discovery, 8 clients)  {r['filled']:.1f} s")
    print(f"  first query (builds the index)       {r['cold'] * 1000:.0f} ms; service RSS "
          f"{r['rss_before']:.0f} -> {r['rss_after']:.0f} MiB")
    for name, size, p50, p95 in r["queries"]:
        print(f"  {name:<24} {size:6d} nodes   p50 {p50 * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms")
    print(f"  all queries                          p50 {r['p50'] * 1000:.1f} ms   "
          f"p95 {r['p95'] * 1000:.1f} ms")
    seconds, groups, grouped, drifted = r["drift"]
    print(f"  drift                {seconds:6.2f} s   {groups} models, {grouped} nodes, "
          f"{drifted} differing from their model's majority")
    for kind, seconds, size, rows in r["exports"]:
        print(f"  export {kind:<11} {seconds:6.2f} s   {size / 2**20:7.1f} MiB   {rows} lines")


if __name__ == "__main__":
    main()
