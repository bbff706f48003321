"""The web console's fleet table (issue 32): `GET /ui/nodes` over N nodes, by filter kind.

Fills a fleet as bench_fleet.py does (fleetgen.py's machines, discovered and inspected by
`ironsight serve`, traits on one node in three; `--state DIR` keeps it for the next run),
then asks for the table's first page (50 rows, the default columns) `--runs` times for each
kind of filter an operator uses: none, each simple field, a simple hardware field, a CEL
expression, a sort by a hardware column, a deep page, and many columns. Each run adds a
clause of its own (`&& (k == k)`, always true), so that every run evaluates the filter over
the whole fleet anew instead of reusing the previous run's answer. Each answer is checked:
its status, and its count of matching nodes against the one the generator's facts give.
Also measured: the page weight (the HTML of the first page, its stylesheet and script; as
sent, and as sent, gzip-compressed) and the service's CPU and memory. With `--bulk`, a bulk
action over all that match the empty filter (the whole fleet) as the console runs it while
its page waits: maintenance on, then off, each confirmed (the count) and run (each node's
result checked), timed, and how long the node list then takes to answer again (discoverd's
fleet index takes in every changed node first).

    .venv/bin/python bench/bench_console.py [--nodes 10000] [--runs 20] [--state DIR] [--bulk]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import httpx
from bench_api import free_port, proc_stat, start_service
from bench_discoverd import BM, wait_states
from bench_fleet import discover, serials, set_traits
from fleetgen import Facts, machine

# kind -> (query parameters, which machines match; None: not checked by count)
KINDS: list[tuple[str, dict[str, str], Callable[[Facts], bool] | None]] = [
    ("no filter", {}, lambda f: True),
    ("state", {"state": "enroll"}, None),
    ("driver", {"driver": "fake-hardware"}, None),
    ("maintenance", {"maintenance": "yes"}, None),
    ("trait", {"trait": "CUSTOM_GPU_POOL"}, lambda f: "CUSTOM_GPU_POOL" in f.traits),
    ("owner", {"owner": "nobody"}, lambda f: False),
    ("memory >= 512 GiB", {"min_memory_gib": "512"}, lambda f: f.memory_gib >= 512),
    ("CEL: 4+ GPUs, 100G NIC", {"where": "hardware.gpu_count >= 4 && "
                                         "inventory.interfaces.exists(i, i.speed_mbps >= 100000)"},
     lambda f: len(f.gpus) >= 4 and 100000 in f.nic_speeds),
    ("sorted by memory, desc", {"sort": "memory", "desc": "1"}, lambda f: True),
    ("page 150 of 200", {"page": "150"}, lambda f: True),
    ("12 columns", {"columns": "name,uuid,provision_state,power_state,maintenance,driver,"
                               "vendor,product,cpus,memory,disks,gpus"}, lambda f: True),
]


def table(client: httpx.Client, params: dict[str, str], run: int) -> tuple[float, int]:
    own = dict(params)
    clause = f"{run} == {run}"
    own["where"] = f"({own['where']}) && {clause}" if "where" in own else clause
    t = time.perf_counter()
    resp = client.get("/ui/nodes", params=own)
    took = time.perf_counter() - t
    assert resp.status_code == 200, resp.text[:500]
    found = re.search(r'id="matched">(\d+)<', resp.text)
    assert found, resp.text[:500]
    assert 'id="problem"' not in resp.text, resp.text[:2000]
    return took, int(found.group(1))


def weight(client: httpx.Client) -> list[tuple[str, int, int]]:
    out = []
    for name, path in (("page (50 rows)", "/ui/nodes"), ("console.css", "/ui/static/console.css"),
                       ("console.js", "/ui/static/console.js")):
        resp = client.get(path, headers={"Accept-Encoding": "gzip"})
        assert resp.status_code == 200
        out.append((name, len(resp.content), resp.num_bytes_downloaded))
    return out


def _said(page: str) -> str:
    """What a console page says went wrong (its error or problem), or its start."""
    found = re.search(r'(?:id="error-message"|id="problem"|class="error")[^>]*>(.*?)</',
                      page, re.S)
    return found.group(1).strip() if found else page[:1000]


def caught_up(client: httpx.Client) -> float:
    """Seconds until the node list answers again after a bulk action: discoverd's fleet
    index first takes in every node the action changed."""
    t = time.perf_counter()
    while 'id="problem"' in client.get("/ui/nodes").text:
        time.sleep(0.5)
    return time.perf_counter() - t


def bulk(client: httpx.Client, action: str, n: int) -> tuple[float, float]:
    """Confirm, then run, `action` over the whole fleet: (seconds to confirm, to run)."""
    page = client.get("/ui/nodes")
    # the session cookie is Secure, which httpx's jar keeps from plain HTTP (a browser sends
    # it to a loopback address): given as a browser would send it, once made
    for made in page.headers.get_list("set-cookie"):
        if made.startswith("ironsight_session="):
            client.cookies.clear()
            client.cookies.set("ironsight_session", made.split(";")[0].split("=", 1)[1],
                               path="/ui/")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token, page.text[:500]
    form = {"csrf": token.group(1), "action": action, "scope": "matching",
            "reason": "bench"}
    t = time.perf_counter()
    confirm = client.post("/ui/nodes/bulk", data=form)
    confirmed = time.perf_counter() - t
    assert confirm.status_code == 200 and f'id="confirm-count">{n}<' in confirm.text, \
        (confirm.status_code, _said(confirm.text))
    t = time.perf_counter()
    done = client.post("/ui/nodes/bulk/run", data={**form, "expected": str(n)}, timeout=3600)
    ran = time.perf_counter() - t
    assert done.status_code == 200 and f"{n} of {n} done" in done.text, \
        (done.status_code, _said(done.text))
    return confirmed, ran


def run(bm_port: int, pid: int, n: int, runs: int, filled_before: bool,
        di_port: int, with_bulk: bool = False) -> dict[str, Any]:
    if not filled_before:
        uuids = asyncio.run(discover(di_port, n))
        wait_states(di_port, uuids, "finished", 3600)
    facts = {i: machine(i)[1] for i in range(n)}
    bm = httpx.Client(base_url=f"http://127.0.0.1:{bm_port}", headers=BM, timeout=120)
    by_uuid = serials(bm)
    assert len(by_uuid) == n, f"{len(by_uuid)} nodes, expected {n}"
    if not filled_before:
        asyncio.run(set_traits(bm_port, {i: u for u, i in by_uuid.items()}, facts))
    ui = httpx.Client(base_url=f"http://127.0.0.1:{bm_port}", timeout=120)
    # the first page waits for the index (warming at start, or taking in the fill's changes),
    # and may give up first with the console's "discoverd did not answer": asked until it
    # answers
    cold_took = caught_up(ui)
    out: dict[str, Any] = {"kinds": [], "cold": cold_took}
    every: list[float] = []
    for name, params, truth in KINDS:
        times = []
        for k in range(runs):
            took, matched = table(ui, params, k)
            times.append(took)
            if truth is not None:
                expected = sum(1 for f in facts.values() if truth(f))
                assert matched == expected, (name, matched, expected)
        every += times
        times.sort()
        out["kinds"].append((name, matched, statistics.median(times),
                             times[max(0, int(len(times) * 0.95) - 1)], times[-1]))
    every.sort()
    out["p95"] = every[max(0, int(len(every) * 0.95) - 1)]
    out["weight"] = weight(ui)
    if with_bulk:
        out["bulk"] = []
        for action in ("maintenance_on", "maintenance_off"):
            out["bulk"].append((action, *bulk(ui, action, n)))
            out["bulk"][-1] += (caught_up(ui),)
    out["cpu"], out["rss"] = proc_stat(pid)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--state", type=Path, default=None)
    parser.add_argument("--bulk", action="store_true",
                        help="also time a bulk action over the whole fleet")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ironsight-bench-") as tmp:
        state = args.state or Path(tmp)
        state.mkdir(parents=True, exist_ok=True)
        marker = state / f"filled-{args.nodes}"
        filled_before = args.state is not None and marker.exists()
        bm_port, di_port = free_port(), free_port()
        extra = (f"[introspection]\nport = {di_port}\nironic_url = http://127.0.0.1:{bm_port}\n"
                 "ironic_retry_interval = 0.05\nramdisk_rate_limit = 0\n"
                 "[auto_discovery]\nenabled = true\nprobe_bmc = false\n"
                 f"rate_limit = {args.nodes}\nmax_pending = {args.nodes}\n"
                 "[processing]\nadd_ports = all\n"
                 f"[discoverd]\nservice_url = http://127.0.0.1:{di_port}/v1\n"
                 "[fleet]\nwarm_at_start = true\n")
        proc = start_service(state, bm_port, None, extra)
        try:
            time.sleep(1)
            r = run(bm_port, proc.pid, args.nodes, args.runs, filled_before, di_port,
                    args.bulk)
            marker.touch()
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"nodes={args.nodes} runs={args.runs} per kind (GET /ui/nodes, first page of 50 "
          "rows unless said; each run evaluated anew; counts checked)")
    print(f"  first page after the start (index warming at start) {r['cold'] * 1000:.0f} ms")
    for name, matched, p50, p95, worst in r["kinds"]:
        print(f"  {name:<24} {matched:6d} match   p50 {p50 * 1000:6.1f} ms   "
              f"p95 {p95 * 1000:6.1f} ms   max {worst * 1000:6.1f} ms")
    print(f"  every kind                             p95 {r['p95'] * 1000:6.1f} ms")
    for name, raw, packed in r["weight"]:
        print(f"  weight {name:<16} {raw / 1024:6.1f} KiB   sent (gzip) "
              f"{packed / 1024:5.1f} KiB")
    for action, confirmed, ran, after in r.get("bulk", []):
        print(f"  bulk {action} over all {args.nodes}: confirm {confirmed:.2f} s, run "
              f"{ran:.1f} s ({args.nodes / ran:.0f} nodes/s), each node's result checked; "
              f"the node list answers again {after:.1f} s after")
    print(f"  service CPU {r['cpu']:.1f} s, RSS {r['rss']:.0f} MiB")


if __name__ == "__main__":
    main()
