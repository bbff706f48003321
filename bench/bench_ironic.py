"""Ironic 39 under bench_inspection.py's flow, for the comparison of issue 10 (item 5): the
same 200 nodes, 8 clients and agent-format reports, through Ironic's own in-band inspection
(its `agent` inspect interface and `POST /v1/continue_inspection`), on PostgreSQL.

Ironic is not a dependency of ironsight: install it in a venv of its own first (the recipe of
../shared/reference/ironic-peer.md; ~30 s from the package registries):

    python3 -m venv /tmp/peer/venv
    /tmp/peer/venv/bin/pip install 'ironic==39.*' psycopg2-binary
    .venv/bin/python bench/bench_ironic.py --ironic /tmp/peer/venv --nodes 200 \\
        --db-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres

Ironic runs as its single `ironic` process (API and conductor; `rpc_transport = none`), with
noauth, fake-hardware, the `agent` inspect interface, the hooks that set cpus, memory_mb and
local_gb, `add_ports = all` and power off at the end, the power sync off (as ironsight's
benchmarks turn theirs off), in a fresh database (ironic_bench). The flow and what it times
are bench_inspection.py's: create N nodes and 2 ports each, manage, inspect until every node
waits in `inspect wait`, one report per node (no version header: what ironic-python-agent
sends; the node is found by its ports' MACs), until all are `manageable` again; then check
cpus and the ports. Server CPU is Ironic's process tree's (PostgreSQL's not included).
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import httpx
import loadgen
from bench_api import free_port, proc_stat
from bench_discoverd import BM, report
from bench_inspection import enroll, ok
from pgstats import fresh_databases
from sqlalchemy.engine import make_url

CONF = """[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = bench-conductor
enabled_hardware_types = fake-hardware
enabled_boot_interfaces = fake
enabled_deploy_interfaces = fake
enabled_inspect_interfaces = agent
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
default_inspect_interface = agent
default_network_interface = noop
log_dir = {state}
log_file = ironic.log
state_path = {state}
[api]
host_ip = 127.0.0.1
port = {port}
[database]
connection = {db}
[dhcp]
dhcp_provider = none
[conductor]
sync_power_state_interval = -1
automated_clean = false
[inspector]
require_managed_boot = false
hooks = $default_hooks,cpus,memory,root-device,boot-mode
add_ports = all
power_off = true
[oslo_concurrency]
lock_path = {state}/locks
"""


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and its children (Ironic forks its worker)."""
    total = proc_stat(pid)[0]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                total += proc_stat(int(entry.name))[0]
    return total


def wait_all(port: int, uuids: list[str], state: str, timeout: float) -> None:
    """Poll the node list (every 0.25 s, as the other benchmarks) until every node is in
    `state`; a node in a failed state ends the run."""
    wanted = set(uuids)
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=BM, timeout=30) as api:
        while True:
            nodes = api.get("/v1/nodes", params={
                "fields": "uuid,provision_state,last_error", "limit": 1000}).json()["nodes"]
            seen = {n["uuid"]: n for n in nodes if n["uuid"] in wanted}
            failed = [n for n in seen.values() if n["provision_state"].endswith("failed")]
            if failed:
                raise SystemExit(f"node {failed[0]['uuid']}: {failed[0]['provision_state']}: "
                                 f"{failed[0]['last_error']}")
            if len(seen) == len(wanted) and all(n["provision_state"] == state
                                                for n in seen.values()):
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"not all nodes {state} after {timeout} s")
            time.sleep(0.25)


async def bench(port: int, pid: int, nodes: int) -> dict[str, float]:
    marks: dict[str, float] = {}
    cpu0 = tree_cpu(pid)
    t0 = time.perf_counter()
    uuids = await enroll(port, nodes, "fake-hardware", t0, marks,
                         lambda port, uuids: wait_all(port, uuids, "manageable", 300))
    await loadgen.run("127.0.0.1", port, BM, nodes, 8, lambda i: (
        "PUT", f"/v1/nodes/{uuids[i]}/states/provision", {"target": "inspect"}), ok(202))
    await asyncio.to_thread(wait_all, port, uuids, "inspect wait", 300)
    marks["inspect"] = time.perf_counter() - t0
    res = await loadgen.run("127.0.0.1", port, {}, nodes, 8, lambda i: (
        "POST", "/v1/continue_inspection", report(i)), ok(202))
    await asyncio.to_thread(wait_all, port, uuids, "manageable", 600)
    total = time.perf_counter() - t0
    cpu = tree_cpu(pid) - cpu0
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=BM, timeout=30) as api:
        docs = api.get("/v1/nodes/detail", params={"limit": 1000}).json()["nodes"]
        ports = api.get("/v1/ports", params={"limit": 1000}).json()["ports"]
    mine = [d for d in docs if d["uuid"] in set(uuids)]
    assert all(d["properties"].get("cpus") == 40 for d in mine), "cpus not set on every node"
    assert len(ports) >= 2 * nodes, f"{len(ports)} ports"
    return {"total": total, **marks, "cb_p50": res.pct(0.5), "cb_p95": res.pct(0.95),
            "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ironic", required=True, help="the venv Ironic 39 is installed in")
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--db-url", required=True,
                        help="a PostgreSQL server (any database: the bench makes its own)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    venv = Path(args.ironic)
    url = make_url(fresh_databases(args.db_url, ["ironic_bench"])[0])
    db = url.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)
    with tempfile.TemporaryDirectory(prefix="ironic-bench-") as tmp:
        state, port = Path(tmp), free_port()
        (state / "locks").mkdir()
        conf = state / "ironic.conf"
        conf.write_text(CONF.format(state=state, port=port, db=db))
        subprocess.run([str(venv / "bin" / "ironic-dbsync"), "--config-file", str(conf),
                        "create_schema"], check=True, capture_output=True)
        proc = subprocess.Popen([str(venv / "bin" / "ironic"), "--config-file", str(conf)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise SystemExit("Ironic did not start; see "
                                         f"{state / 'ironic.log'}") from None
                    time.sleep(0.2)
            time.sleep(2)
            r = asyncio.run(bench(port, proc.pid, args.nodes))
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    n = args.nodes
    print(f"nodes={n} Ironic 39 (agent inspection) db=postgresql")
    print(f"  total (create → all manageable again)  {r['total']:6.2f} s  "
          f"({r['total'] / n * 1000:.1f} ms/node)")
    print(f"    create nodes + 2 ports each           {r['create']:6.2f} s")
    print(f"    manage, all manageable                 {r['manage']:6.2f} s")
    print(f"    inspect, all inspect wait              {r['inspect']:6.2f} s")
    print(f"    reports posted, all manageable         {r['total']:6.2f} s")
    print(f"  report POST latency                      p50 {r['cb_p50']:.1f} ms  "
          f"p95 {r['cb_p95']:.1f} ms")
    print(f"  server CPU                               {r['cpu']:6.2f} s  "
          f"({r['cpu'] / n * 1000:.1f} ms/node)")


if __name__ == "__main__":
    main()
