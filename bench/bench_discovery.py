"""Auto-discovery benchmark (issue 30): N machines nobody enrolled report through the callback.

Starts `ironsight serve` (both services, one process, `[auto_discovery] enabled`, the BMC
probe off: the simulated BMC addresses answer nothing) on a fresh state directory. Timed:
1. discovery: an agent-format report per machine (distinct MACs, BMC address, serial and
   system UUID; 8 clients) to discoverd's /v1/continue, then the wait until every new node's
   processing is finished; exactly N nodes must exist, all pending approval, each with its
   ports;
2. replay: the same N reports again: every answer must name the node created for it (seen
   again), no node may be created, and each node must have two inventory versions.

The reports all come from 127.0.0.1, one /24: `[auto_discovery] rate_limit` is raised to
N (`--rate-limit`); `--flood` keeps the default (60 a minute per /24) and reports how many of
the N were created and how many refused (429) instead.

    .venv/bin/python bench/bench_discovery.py [--nodes 500] [--db-url URL]

With --db-url (a PostgreSQL server), each service keeps its tables in a fresh database of its
own there (ironsight_bench_bm, ironsight_bench_di), as bench_inspection.py does.
    .venv/bin/python bench/bench_discovery.py --nodes 200 --flood
    .venv/bin/python bench/bench_discovery.py --nodes 500 --known 10000   # a fleet to look up
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid as uuidlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import loadgen
from bench_api import free_port, proc_stat, start_service
from bench_discoverd import BM, report, wait_states
from pgstats import fresh_databases


def unknown(i: int) -> dict[str, Any]:
    """bench_discoverd's report, made a machine of its own (serial and system UUID)."""
    data = report(i)
    data["inventory"]["system_vendor"]["uuid"] = str(uuidlib.uuid5(uuidlib.NAMESPACE_OID,
                                                                   f"bench-{i}"))
    return data


async def discovered(bm_port: int) -> dict[str, Any]:
    conn = loadgen.Connection("127.0.0.1", bm_port, BM)
    try:
        found: list[dict[str, Any]] = []
        marker = None
        while True:
            query = "limit=1000" + (f"&marker={marker}" if marker else "")
            body = (await conn.request("GET", f"/v1/discovery/nodes?{query}")).json()
            found += body["nodes"]
            if len(body["nodes"]) < 1000:
                return {"nodes": found, "counts": body["counts"]}
            marker = body["nodes"][-1]["uuid"]
    finally:
        conn.close()


async def versions(di_port: int, uuids: list[str]) -> set[int]:
    conn = loadgen.Connection("127.0.0.1", di_port, {})
    try:
        return {len((await conn.request("GET", f"/v1/introspection/{u}/data/history")
                     ).json()["history"]) for u in uuids}
    finally:
        conn.close()


async def enrol_known(bm_port: int, known: int) -> float:
    """`known` nodes enrolled by hand first (each with a BMC address and a port, neither the
    reports' own), so that every lookup scans a fleet of that size. Seconds taken."""
    t0 = time.perf_counter()
    uuids: dict[int, str] = {}

    def node(i: int) -> tuple[str, str, Any]:
        return "POST", "/v1/nodes", {"driver": "fake-hardware", "name": f"known-{i}",
                                     "driver_info": {"ipmi_address": f"10.{i >> 16 & 255}."
                                                                     f"{i >> 8 & 255}.{i & 255}"}}

    def created(resp: loadgen.Response) -> None:
        assert resp.status == 201, resp.body
        uuids[len(uuids)] = resp.json()["uuid"]

    await loadgen.run("127.0.0.1", bm_port, BM, known, 8, node, created)
    listed = list(uuids.values())

    def port(i: int) -> tuple[str, str, Any]:
        return "POST", "/v1/ports", {"node_uuid": listed[i],
                                     "address": f"02:ee:00:{i >> 16 & 255:02x}:"
                                                f"{i >> 8 & 255:02x}:{i & 255:02x}"}

    def port_created(resp: loadgen.Response) -> None:
        assert resp.status == 201, resp.body

    await loadgen.run("127.0.0.1", bm_port, BM, known, 8, port, port_created)
    return time.perf_counter() - t0


async def bench(bm_port: int, di_port: int, pid: int, nodes: int, flood: bool,
                known: int = 0) -> dict[str, Any]:
    enrolled = await enrol_known(bm_port, known) if known else 0.0
    answers: dict[int, int] = {}
    created: dict[int, str] = {}

    def make(i: int) -> tuple[str, str, Any]:
        return "POST", "/v1/continue", unknown(i)

    def first(resp: loadgen.Response) -> None:
        answers[resp.status] = answers.get(resp.status, 0) + 1
        assert resp.status in ((200, 429) if flood else (200,)), resp.body
        if resp.status == 200:
            created[len(created)] = resp.json()["uuid"]

    cpu0, _ = proc_stat(pid)
    t0 = time.perf_counter()
    res = await loadgen.run("127.0.0.1", di_port, {}, nodes, 8, make, first)
    uuids = list(created.values())
    await asyncio.to_thread(wait_states, di_port, uuids, "finished", 600)
    t1 = time.perf_counter()
    found = await discovered(bm_port)
    out: dict[str, Any] = {"answers": dict(answers), "created": len(found["nodes"]),
                           "known": known, "enrolled": enrolled,
                           "pending": found["counts"].get("pending", 0),
                           "discover": t1 - t0, "cb_p50": res.pct(0.5), "cb_p95": res.pct(0.95)}
    if flood:
        return out
    assert len(found["nodes"]) == nodes == len(set(uuids)), (len(found["nodes"]), nodes)
    seen: dict[int, str] = {}

    def again(resp: loadgen.Response) -> None:
        assert resp.status == 200, resp.body
        seen[len(seen)] = resp.json()["uuid"]

    t2 = time.perf_counter()
    res2 = await loadgen.run("127.0.0.1", di_port, {}, nodes, 8, make, again)
    t3 = time.perf_counter()
    cpu1, rss = proc_stat(pid)
    after = await discovered(bm_port)
    assert set(seen.values()) == set(uuids), "a replay named another node"
    assert len(after["nodes"]) == nodes, f"the replay created {len(after['nodes']) - nodes}"
    out.update(replay=t3 - t2, re_p50=res2.pct(0.5), re_p95=res2.pct(0.95),
               created_by_replay=len(after["nodes"]) - nodes,
               versions=sorted(await versions(di_port, uuids)), cpu=cpu1 - cpu0, rss=rss)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--db-url", default=None)
    parser.add_argument("--flood", action="store_true",
                        help="keep the default rate limit and count the refusals")
    parser.add_argument("--known", type=int, default=0,
                        help="nodes enrolled by hand first (BMC and port each): the fleet "
                             "every lookup covers")
    args = parser.parse_args()
    limit = "" if args.flood else f"rate_limit = {max(args.nodes, 60)}\n"
    with tempfile.TemporaryDirectory(prefix="ironsight-bench-") as tmp:
        state = Path(tmp)
        bm_port, di_port = free_port(), free_port()
        bm_url = di_conn = None
        if args.db_url:  # fresh databases of their own for both services
            bm_url, di_url = fresh_databases(args.db_url, ["ironsight_bench_bm",
                                                           "ironsight_bench_di"])
            di_conn = f"connection = {di_url}\n"
        extra = (f"[introspection]\nport = {di_port}\nironic_url = http://127.0.0.1:{bm_port}\n"
                 f"{di_conn or ''}"
                 "ironic_retry_interval = 0.05\nramdisk_rate_limit = 0\n"
                 f"[auto_discovery]\nenabled = true\nprobe_bmc = false\n{limit}"
                 f"max_pending = {max(args.nodes, 1000)}\n"
                 "[processing]\nadd_ports = all\n")
        proc = start_service(state, bm_port, bm_url, extra)
        try:
            time.sleep(1)
            r = asyncio.run(bench(bm_port, di_port, proc.pid, args.nodes, args.flood,
                                  args.known))
        finally:
            proc.terminate()
            proc.wait(10)
    n = args.nodes
    print(f"machines={n} db={'postgresql' if args.db_url else 'sqlite'}"
          f"{' flood (default rate limit)' if args.flood else ''}"
          f"{f' beside {args.known} enrolled nodes' if args.known else ''}")
    if args.known:
        print(f"  fleet enrolled first           {r['known']} nodes with a BMC and a port "
              f"({r['enrolled']:.1f} s, not timed below)")
    print(f"  answers                        {r['answers']}")
    print(f"  nodes created                  {r['created']} (pending approval: {r['pending']})")
    per = r["discover"] / max(r["created"], 1) * 1000
    print(f"  discovery (reports → processed) {r['discover']:6.2f} s   ({per:.1f} ms/machine)")
    print(f"  report latency                 p50 {r['cb_p50']:.1f} ms   p95 {r['cb_p95']:.1f} ms")
    if not args.flood:
        print(f"  replay (seen again)            {r['replay']:6.2f} s   "
              f"({r['replay'] / n * 1000:.1f} ms/machine), nodes created "
              f"{r['created_by_replay']}, inventory versions per node {r['versions']}")
        print(f"  replay latency                 p50 {r['re_p50']:.1f} ms   "
              f"p95 {r['re_p95']:.1f} ms")
        print(f"  server CPU                     {r['cpu']:6.2f} s   RSS after {r['rss']:.1f} MiB")


if __name__ == "__main__":
    main()
