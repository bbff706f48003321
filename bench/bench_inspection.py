"""Inspection benchmark (issue 4): the full operator flow for N `fake` nodes through the
bare-metal API, with discoverd doing the inspection.

`ironsight serve` (both services, one process, `[discoverd] enabled`) on a fresh state
directory. Timed from the first request: create N nodes (8 clients), 2 ports each, manage
(wait until all `manageable`), inspect (wait until discoverd waits for every node), POST an
agent-format report per node to discoverd (8 clients), wait until every node is `manageable`
again; then check cpus/cpu_arch/memory_mb/local_gb, 2 ports and power off on every node.

    .venv/bin/python bench/bench_inspection.py [--nodes 200] [--db-url URL]
    .venv/bin/python bench/bench_inspection.py --replicas 3 --db-url URL [--nodes 2000]
    .venv/bin/python bench/bench_inspection.py --rules 100   # with 100 inspection rules
    .venv/bin/python bench/bench_inspection.py --rules 100 --rules-miss   # none matching

With --replicas 3, three replicas of each service (`serve --only ...`, each with its state
directory) share the two databases behind HAProxy running docs/examples/haproxy.cfg, as
docs/scale-out.md draws it: the benchmark's clients, the bare-metal replicas (to reach
discoverd) and discoverd (to reach the bare-metal API) all go through the balancer; server
CPU is that of the six replicas (HAProxy's own is not counted).

With --db-url (a PostgreSQL server), each service keeps its tables in a fresh database of its
own there (ironsight_bench_bm, ironsight_bench_di), and what the server saw of the whole flow is
counted per node and service (bench/pgstats.py: statements by kind, transactions, round trips;
--top lists the most frequent statements). On SQLite, the counts come from each service's
/metrics (statements and writes), where the code has them. --requests lists each service's
API requests per node by endpoint (its /metrics); with --split, the server CPU is shown per
service too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import benchauth
import benchrules
import httpx
import loadgen
from bench_api import free_port, proc_stat, start_service
from bench_discoverd import BM, POLL, mac, report, verify, wait_states
from pgstats import PgStats, fresh_databases
from prometheus_client.parser import text_string_to_metric_families

from ironsight.client.http import baremetal_client
from ironsight.client.wait import NodeWatch, Poller, wait_for_nodes


def wait_manageable(port: int, uuids: list[str], timeout: float) -> None:
    """Poll the node list (the operator's view: one request per 1000 nodes, every POLL s)
    until every node is manageable."""
    with baremetal_client(f"http://127.0.0.1:{port}", credentials=benchauth.CREDENTIALS) as api:
        outcome = wait_for_nodes(api, uuids, NodeWatch.provision("manageable"), timeout,
                                 Poller(interval=POLL), stop_on_failure=True, batched=True)
    if outcome.failed:
        raise SystemExit(outcome.failures[0])
    if outcome.timed_out:
        raise SystemExit(f"only {len(outcome.reached)}/{len(uuids)} nodes manageable after "
                         f"{timeout} s")


def cpu_rss(pids: list[int]) -> tuple[float, float]:
    stats = [proc_stat(pid) for pid in pids]
    return sum(s[0] for s in stats), sum(s[1] for s in stats)


def ok(status: int) -> Callable[[loadgen.Response], None]:
    def check(resp: loadgen.Response) -> None:
        assert resp.status == status, resp.body
    return check


async def enroll(port: int, nodes: int, driver: str, t0: float, marks: dict[str, float],
                 wait_manageable: Callable[[int, list[str]], None]) -> list[str]:
    """The flow's first steps, on any Ironic-compatible API: create `nodes` nodes of `driver`
    and 2 ports each (8 clients; marks "create"), manage them, until `wait_manageable` returns
    (marks "manage"). The UUIDs, in node order."""
    stamp = time.time_ns()
    by_index: dict[int, str] = {}

    def created(resp: loadgen.Response) -> None:
        assert resp.status == 201, resp.body
        node = resp.json()
        by_index[int(node["name"].split("-")[0][1:])] = node["uuid"]

    await loadgen.run("127.0.0.1", port, BM, nodes, 8, lambda i: (
        "POST", "/v1/nodes", {"driver": driver, "name": f"b{i}-{stamp}"}), created)
    uuids = [by_index[i] for i in range(nodes)]
    await loadgen.run("127.0.0.1", port, BM, 2 * nodes, 8, lambda i: (
        "POST", "/v1/ports", {"address": mac(i // 2, i % 2), "node_uuid": uuids[i // 2]}),
        ok(201))
    marks["create"] = time.perf_counter() - t0
    await loadgen.run("127.0.0.1", port, BM, nodes, 8, lambda i: (
        "PUT", f"/v1/nodes/{uuids[i]}/states/provision", {"target": "manage"}), ok(202))
    await asyncio.to_thread(wait_manageable, port, uuids)
    marks["manage"] = time.perf_counter() - t0
    return uuids


async def bench(bm_port: int, di_port: int, pids: list[int], nodes: int,
                pg: PgStats | None, counted: bool = True, rules: int = 0) -> dict[str, float]:
    """The flow; `counted`: each service is one process, whose /metrics count its SQL."""
    marks: dict[str, float] = {}
    sql0 = db_counts(bm_port, di_port) if counted else {}
    if pg is not None:
        pg.reset()
    cpu0, _ = cpu_rss(pids)
    each0 = [proc_stat(pid)[0] for pid in pids]
    t0 = time.perf_counter()
    uuids = await enroll(bm_port, nodes, "fake", t0, marks,
                         lambda port, uuids: wait_manageable(port, uuids, 60))
    await loadgen.run("127.0.0.1", bm_port, BM, nodes, 8, lambda i: (
        "PUT", f"/v1/nodes/{uuids[i]}/states/provision", {"target": "inspect"}), ok(202))
    await asyncio.to_thread(wait_states, di_port, uuids, "waiting", 60)
    marks["inspect"] = time.perf_counter() - t0
    res = await loadgen.run("127.0.0.1", di_port, {}, nodes, 8,
                            lambda i: ("POST", "/v1/continue", report(i)), ok(200))
    await asyncio.to_thread(wait_manageable, bm_port, uuids, 120)
    total = time.perf_counter() - t0
    cpu1, rss = cpu_rss(pids)
    each = [proc_stat(pid)[0] - c for pid, c in zip(pids, each0, strict=True)]
    now = db_counts(bm_port, di_port) if counted else {}
    sql = {k: v - sql0.get(k, 0) for k, v in now.items()}
    if pg is not None:
        for service in ("bm", "di"):
            for kind, n in pg.counts(f"ironsight_bench_{service}").items():
                sql[f"pg_{service}_{kind}"] = n
    await verify(bm_port, uuids)
    if rules:
        conn = loadgen.Connection("127.0.0.1", bm_port, BM)
        try:
            await benchrules.verify(conn, uuids, rules)
        finally:
            conn.close()
    return {"total": total, **marks, "cb_p50": res.pct(0.5), "cb_p95": res.pct(0.95),
            "cpu": cpu1 - cpu0, "rss": rss, **sql,
            **({"cpu_bm": each[0], "cpu_di": each[1]} if len(each) == 2 else {})}


def db_counts(bm_port: int, di_port: int) -> dict[str, float]:
    """SQL statements and writes so far, of each service (its /metrics; none from
    code older than the counters)."""
    counts = {}
    for service, port in (("bm", bm_port), ("di", di_port)):
        resp = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10,
                         headers=benchauth.CREDENTIALS.headers())
        if resp.status_code != 200:
            continue
        for family in text_string_to_metric_families(resp.text):
            if family.name in ("ironsight_db_statements", "ironsight_db_writes"):
                counts[f"{service}_{family.name.split('_')[-1]}"] = family.samples[0].value
            elif family.name == "ironsight_api_request_seconds":
                for sample in family.samples:
                    if sample.name.endswith("_count"):
                        key = (f"req_{service}_{sample.labels['method']} "
                               f"{sample.labels['endpoint']}")
                        counts[key] = counts.get(key, 0) + sample.value
    return counts


HAPROXY_CFG = Path(__file__).resolve().parents[1] / "docs" / "examples" / "haproxy.cfg"


def start_replicas(state: Path, bm_url: str, di_url: str
                   ) -> tuple[list[subprocess.Popen[bytes]], int, int]:
    """Three replicas of each service and HAProxy in front (the example file names three):
    the processes, HAProxy last, and the balancer's bare-metal and discoverd ports."""
    lb_bm, lb_di = free_port(), free_port()
    env = {**os.environ, "IRONSIGHT_LB_BAREMETAL": f"127.0.0.1:{lb_bm}",
           "IRONSIGHT_LB_DISCOVERD": f"127.0.0.1:{lb_di}"}
    procs = []
    for i in (1, 2, 3):
        bm_port, di_port = free_port(), free_port()
        for kind in ("bm", "di"):
            (state / f"{kind}{i}").mkdir()
        procs.append(start_service(
            state / f"bm{i}", bm_port, bm_url,
            f"[discoverd]\nenabled = true\nservice_url = http://127.0.0.1:{lb_di}/v1\n",
            only="baremetal"))
        procs.append(start_service(
            state / f"di{i}", free_port(), bm_url,
            f"[introspection]\nport = {di_port}\nironic_url = http://127.0.0.1:{lb_bm}\n"
            f"connection = {di_url}\nironic_retry_interval = 0.05\n"
            "allow_tokenless_reports = true\n"
            "[processing]\nadd_ports = all\n", only="discoverd", wait_port=di_port))
        env[f"IRONSIGHT_BAREMETAL_{i}"] = f"127.0.0.1:{bm_port}"
        env[f"IRONSIGHT_DISCOVERD_{i}"] = f"127.0.0.1:{di_port}"
    procs.append(subprocess.Popen(["haproxy", "-db", "-f", str(HAPROXY_CFG)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(2)  # HAProxy's first health checks (inter 1s) mark the replicas up
    return procs, lb_bm, lb_di


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--db-url", default=None,
                        help="a PostgreSQL server (any database: the bench makes its own)")
    parser.add_argument("--top", action="store_true",
                        help="with --db-url: list each service's most frequent statements")
    parser.add_argument("--replicas", type=int, choices=(1, 3), default=1,
                        help="3: three replicas of each service behind HAProxy (--db-url)")
    parser.add_argument("--requests", action="store_true",
                        help="list each service's API requests per node, by endpoint")
    parser.add_argument("--split", action="store_true",
                        help="run the two services as two processes (serve --only ...)")
    parser.add_argument("--auth", action="store_true",
                        help="http_basic on both services (bench/benchauth.py)")
    parser.add_argument("--rules", type=int, default=0, metavar="N",
                        help="N inspection rules in discoverd (bench/benchrules.py)")
    parser.add_argument("--rules-miss", action="store_true",
                        help="with --rules: no rule matches (the rules' evaluation alone)")
    args = parser.parse_args()
    if args.rules == 1:
        parser.error("--rules needs 2 or more (the last two are the ones that match)")
    # A SIGTERM (a timeout, a kill of the run) stops the services too (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="ironsight-bench-") as tmp:
        state = Path(tmp)
        bm_port, di_port = free_port(), free_port()
        pg, bm_url, di_url = None, None, None
        if args.db_url:
            bm_url, di_url = fresh_databases(args.db_url, ["ironsight_bench_bm",
                                                           "ironsight_bench_di"])
            pg = PgStats(args.db_url)
        both = f"connection = {di_url}\n" if di_url else ""
        auth = benchauth.enable(state, BM) if args.auth else {}
        extra = (f"[introspection]\nport = {di_port}\nironic_url = http://127.0.0.1:{bm_port}\n"
                 f"{both}{auth.get('introspection', '')}"
                 "ironic_retry_interval = 0.05\n"
                 "allow_tokenless_reports = true\n[processing]\nadd_ports = all\n"
                 f"[discoverd]\nenabled = true\nservice_url = http://127.0.0.1:{di_port}/v1\n"
                 f"{auth.get('discoverd', '')}")
        defaults = auth.get("DEFAULT", "")
        if args.replicas == 3:
            if bm_url is None or di_url is None:
                parser.error("--replicas 3 needs --db-url (replicas share PostgreSQL)")
            if args.auth:
                parser.error("--auth is for one process of each service")
            procs, bm_port, di_port = start_replicas(state, bm_url, di_url)
            servers = procs[:-1]
        else:
            procs = ([start_service(state, bm_port, bm_url, extra, only="baremetal",
                                    defaults=defaults),
                      start_service(state, bm_port, bm_url, extra, only="discoverd",
                                    wait_port=di_port, defaults=defaults)]
                     if args.split else [start_service(state, bm_port, bm_url, extra,
                                                       defaults=defaults)])
            servers = procs
        try:
            time.sleep(1)
            if args.rules:
                benchrules.create(di_port, args.rules, hits=not args.rules_miss)
            r = asyncio.run(bench(bm_port, di_port, [p.pid for p in servers], args.nodes, pg,
                                  counted=args.replicas == 1,
                                  rules=0 if args.rules_miss else args.rules))
            top = ({s: pg.top(f"ironsight_bench_{s}") for s in ("bm", "di")}
                   if pg is not None and args.top else {})
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    n = args.nodes
    layout = ("6 (3 replicas of each service behind HAProxy)" if args.replicas == 3 else
              "2 (serve --only baremetal / --only discoverd)" if args.split else "1")
    print(f"nodes={n} db={'postgresql' if args.db_url else 'sqlite'} processes={layout}"
          f" auth={'http_basic' if args.auth else 'noauth'} rules={args.rules}"
          f"{' (none matching)' if args.rules_miss else ''}")
    print(f"  total (create → all manageable again)  {r['total']:6.2f} s  "
          f"({r['total'] / n * 1000:.1f} ms/node)")
    print(f"    create nodes + 2 ports each           {r['create']:6.2f} s")
    print(f"    manage, all manageable                 {r['manage']:6.2f} s")
    print(f"    inspect, discoverd waits for all       {r['inspect']:6.2f} s")
    print(f"    reports posted, all manageable         {r['total']:6.2f} s")
    print(f"  report POST latency                      p50 {r['cb_p50']:.1f} ms  "
          f"p95 {r['cb_p95']:.1f} ms")
    print(f"  server CPU                               {r['cpu']:6.2f} s  "
          f"({r['cpu'] / n * 1000:.1f} ms/node)"
          + (f"; bare-metal {r['cpu_bm']:.2f} s, discoverd {r['cpu_di']:.2f} s"
             if "cpu_bm" in r else ""))
    print(f"  RSS after                                {r['rss']:6.1f} MiB")
    if "bm_statements" in r:
        print(f"  SQL per node (/metrics): bare-metal {r['bm_statements'] / n:.1f} statements, "
              f"{r['bm_writes'] / n:.1f} writes; discoverd {r['di_statements'] / n:.1f} "
              f"statements, {r['di_writes'] / n:.1f} writes")
    for service, name in (("bm", "bare-metal"), ("di", "discoverd")):
        prefix = f"pg_{service}_"
        kinds = {k[len(prefix):]: v / n for k, v in r.items() if k.startswith(prefix)}
        if not kinds:
            continue
        main_kinds = ("calls", "transactions", "sessions", "select", "insert", "update", "delete",
                      "begin", "commit", "rollback")
        shown = ", ".join(f"{k} {kinds[k]:.1f}" for k in main_kinds if k in kinds)
        rest = sum(v for k, v in kinds.items() if k not in main_kinds)
        print(f"  PostgreSQL per node, {name}: {shown}, other {rest:.1f}")
        for calls, query in top.get(service, []):
            print(f"      {calls / n:6.2f}  {query}")
    if args.requests:
        for service, name in (("bm", "bare-metal"), ("di", "discoverd")):
            prefix = f"req_{service}_"
            found = sorted(((v / n, k[len(prefix):]) for k, v in r.items()
                            if k.startswith(prefix) and v), reverse=True)
            print(f"  API requests per node, {name}: {sum(v for v, _ in found):.1f}")
            for per_node, what in found:
                print(f"      {per_node:6.2f}  {what}")


if __name__ == "__main__":
    main()
