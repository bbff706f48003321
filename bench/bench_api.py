"""Bare-metal API benchmark (issue 2 targets).

Starts `ironsight serve` as its own process on a fresh state directory, then through the API:
creates N nodes with 8 concurrent clients (rate), adds 2 ports per node, and measures
`GET /v1/nodes?limit=1000` and `GET /v1/nodes/{uuid}` latency (sequential, 1 client), server
CPU per create, and the service's idle RSS.

    .venv/bin/python bench/bench_api.py [--nodes 10000] [--db-url postgresql+psycopg://...]

With --db-url (a PostgreSQL server), the service's tables go in a fresh database there,
ironsight_bench_api (dropped and made again at each run).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import loadgen
from pgstats import fresh_databases

from ironsight.client.wait import Poller, until

HEADERS = {"X-OpenStack-Ironic-API-Version": "1.115"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def proc_stat(pid: int) -> tuple[float, float]:
    """(CPU seconds, RSS MiB) of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    return cpu, rss


def start_service(state: Path, port: int, db_url: str | None, extra: str = "",
                  only: str | None = None, wait_port: int | None = None, defaults: str = ""
                  ) -> subprocess.Popen[bytes]:
    """`defaults`: more [DEFAULT] options (as lines)."""
    conf = state / f"bench-{only or 'all'}.conf"
    debug = "debug = true\n" if os.environ.get("BENCH_DEBUG") else ""
    lines = [f"[DEFAULT]\nstate_dir = {state}\n{debug}{defaults}", f"[api]\nport = {port}\n",
             "[conductor]\nsync_power_state_interval = 0\n", extra]
    if db_url:
        lines.append(f"[database]\nconnection = {db_url}\n")
    conf.write_text("".join(lines))
    if only is None and "[introspection]" not in extra:
        only = "baremetal"
    args = ["--only", only] if only else []
    # BENCH_PYTHON: another checkout's interpreter, to run its code under this benchmark
    python = os.environ.get("BENCH_PYTHON", sys.executable)
    proc = subprocess.Popen([python, "-m", "ironsight.cli", "serve", "--config-file",
                             str(conf), *args],
                            stdout=open(state / f"service-{only or 'all'}.log", "wb"),  # noqa: SIM115
                            stderr=subprocess.STDOUT)

    def listening() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", wait_port or port)) == 0

    if until(listening, 15, Poller(interval=0.1)):
        return proc
    raise SystemExit("service did not start; see " + str(state / "service.log"))


async def bench(port: int, pid: int, nodes: int) -> dict[str, float]:
    out: dict[str, float] = {}
    stamp = time.time_ns()
    uuids: list[str] = []

    def created(resp: loadgen.Response) -> None:
        assert resp.status == 201, resp.body
        uuids.append(resp.json()["uuid"])

    cpu0, _ = proc_stat(pid)
    res = await loadgen.run("127.0.0.1", port, HEADERS, nodes, 8,
                            lambda i: ("POST", "/v1/nodes",
                                       {"driver": "fake", "name": f"n{i}-{stamp}",
                                        "properties": {"cpus": 4}}), created)
    cpu1, _ = proc_stat(pid)
    out.update(create_rate=res.rate, create_p50_ms=res.pct(0.5), create_p95_ms=res.pct(0.95),
               create_cpu_ms=(cpu1 - cpu0) / nodes * 1000)

    def port_ok(resp: loadgen.Response) -> None:
        assert resp.status == 201, resp.body

    res = await loadgen.run(
        "127.0.0.1", port, HEADERS, 2 * nodes, 8,
        lambda i: ("POST", "/v1/ports", {"address": f"52:{i >> 24 & 255:02x}:{i >> 16 & 255:02x}:"
                                         f"{i >> 8 & 255:02x}:{i & 255:02x}:01",
                                         "node_uuid": uuids[i // 2]}), port_ok)
    out.update(port_rate=res.rate)

    def ok(resp: loadgen.Response) -> None:
        assert resp.status == 200, resp.body

    res = await loadgen.run("127.0.0.1", port, HEADERS, 50, 1,
                            lambda i: ("GET", "/v1/nodes?limit=1000", None), ok)
    out.update(list_p50_ms=res.pct(0.5), list_p95_ms=res.pct(0.95))
    marker = uuids[len(uuids) // 2]
    res = await loadgen.run("127.0.0.1", port, HEADERS, 20, 1,
                            lambda i: ("GET", f"/v1/nodes?limit=1000&marker={marker}", None), ok)
    out.update(list_marker_p50_ms=res.pct(0.5))
    res = await loadgen.run("127.0.0.1", port, HEADERS, 20, 1,
                            lambda i: ("GET", "/v1/nodes/detail?limit=1000", None), ok)
    out.update(detail_p50_ms=res.pct(0.5))
    sample = random.Random(1).sample(uuids, min(1000, len(uuids)))
    res = await loadgen.run("127.0.0.1", port, HEADERS, len(sample), 1,
                            lambda i: ("GET", f"/v1/nodes/{sample[i]}", None), ok)
    out.update(show_p50_ms=res.pct(0.5), show_p95_ms=res.pct(0.95))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--db-url", default=None,
                        help="a PostgreSQL server (any database: the bench makes its own)")
    args = parser.parse_args()
    db_url = fresh_databases(args.db_url, ["ironsight_bench_api"])[0] if args.db_url else None
    with tempfile.TemporaryDirectory(prefix="ironsight-bench-") as tmp:
        state = Path(tmp)
        port = free_port()
        proc = start_service(state, port, db_url)
        try:
            time.sleep(2)
            _, rss_start = proc_stat(proc.pid)
            results = asyncio.run(bench(port, proc.pid, args.nodes))
            time.sleep(5)
            _, rss_idle = proc_stat(proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)
    db = "postgresql" if args.db_url else "sqlite"
    print(f"nodes={args.nodes} db={db}")
    print(f"  idle RSS at start            {rss_start:8.1f} MiB")
    print(f"  create nodes (8 clients)     {results['create_rate']:8.0f} /s   "
          f"p50 {results['create_p50_ms']:.1f} ms  p95 {results['create_p95_ms']:.1f} ms  "
          f"server CPU {results['create_cpu_ms']:.2f} ms/node")
    print(f"  create ports (8 clients)     {results['port_rate']:8.0f} /s")
    print(f"  GET /v1/nodes?limit=1000     p50 {results['list_p50_ms']:6.1f} ms  "
          f"p95 {results['list_p95_ms']:.1f} ms  (with marker: p50 "
          f"{results['list_marker_p50_ms']:.1f} ms)")
    print(f"  GET /v1/nodes/detail?limit=1000 p50 {results['detail_p50_ms']:6.1f} ms")
    print(f"  GET /v1/nodes/{{uuid}}         p50 {results['show_p50_ms']:6.2f} ms  "
          f"p95 {results['show_p95_ms']:.2f} ms")
    print(f"  idle RSS after load          {rss_idle:8.1f} MiB")


if __name__ == "__main__":
    main()
