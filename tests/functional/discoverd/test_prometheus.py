"""The shipped monitoring against a real Prometheus (Debian's `prometheus`, which
scripts/install-deps.sh installs) scraping a running `ironsight serve`: the alert rules
(docs/examples/prometheus-alerts.yml) load and the stall alert fires on a node that stalls;
every query of the Grafana dashboard (docs/examples/grafana-dashboard.json) runs and names
only metrics the services expose.

The stall alert waits 10 minutes for a quiet attempt and then 1 more: here its threshold is
2 s and its `for` 0 s (the copy of the rules is rewritten so, and only so), so that the
test takes seconds. promtool tests the rules as shipped (test_alert_rules.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .. import waits
from ..conftest import ServiceProcess, free_tcp_port, stop_process

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"
RULES = EXAMPLES / "prometheus-alerts.yml"
DASHBOARD = EXAMPLES / "grafana-dashboard.json"
H = {"X-OpenStack-Ironic-API-Version": "1.115"}
# Grafana's macros, as a query at a given time resolves them
GRAFANA_MACROS = {"$__rate_interval": "1m", "$__range": "1h", "$__interval": "15s"}


class Prometheus:
    def __init__(self, workdir: Path, targets: list[str], rules: Path) -> None:
        self.port = free_tcp_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = workdir / "prometheus.yml"
        self.config.write_text(json.dumps({  # YAML is a superset of JSON
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(rules)],
            "scrape_configs": [{"job_name": "ironsight",
                                "static_configs": [{"targets": targets}]}]}))
        self.data = workdir / "data"
        self.log = workdir / "prometheus.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Prometheus:
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.fail("prometheus is missing: scripts/install-deps.sh installs Debian's")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [binary, f"--config.file={self.config}", f"--storage.tsdb.path={self.data}",
                 f"--web.listen-address=127.0.0.1:{self.port}"],
                stdout=log, stderr=subprocess.STDOUT)
        until(lambda: self.get("/-/ready", raw=True), 30, "Prometheus ready", self)
        return self

    def get(self, path: str, raw: bool = False, **params: str) -> Any:
        try:
            resp = httpx.get(self.url + path, params=params, timeout=5)
        except httpx.TransportError:
            return None
        if raw:
            return resp.status_code == 200
        body = resp.json()
        assert body["status"] == "success", body
        return body["data"]

    def stop(self) -> None:
        stop_process(self.proc)


def until(found: Callable[[], Any], timeout: float, what: str,
          prometheus: Prometheus | None = None) -> Any:
    try:
        return waits.until(found, timeout, what, interval=0.25)
    except AssertionError:
        log = prometheus.log.read_text()[-3000:] if prometheus is not None else ""
        pytest.fail(f"no {what} within {timeout} s\n{log}")


def quick_rules(directory: Path) -> Path:
    """The shipped rules, the stall alert's 600 s and its `for: 1m` made 2 s and 0 s."""
    text = RULES.read_text()
    stalled = text.index("alert: IronsightInspectionStalled")
    head, tail = text[:stalled], text[stalled:]
    assert "max(ironsight_inspection_quiet_seconds) > 600" in tail and "for: 1m" in tail
    tail = tail.replace("> 600", "> 2", 1).replace("for: 1m", "for: 0s", 1)
    copy = directory / "alerts.yml"
    copy.write_text(head + tail)
    return copy


@pytest.fixture(scope="module")
def service(baremetal_service: ServiceProcess) -> ServiceProcess:
    """`ironsight serve`, both services in one process (conftest.py)."""
    return baremetal_service


@pytest.fixture(scope="module")
def prometheus(service: ServiceProcess,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    workdir = tmp_path_factory.mktemp("prometheus")
    server = Prometheus(workdir, [f"127.0.0.1:{service.port}", f"127.0.0.1:{service.di_port}"],
                        quick_rules(workdir)).start()
    try:
        until(lambda: len([t for t in server.get("/api/v1/targets")["activeTargets"]
                           if t["health"] == "up"]) == 2, 30, "both services scraped", server)
        yield server
    finally:
        server.stop()


def alerts(prometheus: Prometheus, state: str) -> list[str]:
    return [a["labels"]["alertname"] for a in prometheus.get("/api/v1/alerts")["alerts"]
            if a["state"] == state]


def stalled_node(service: ServiceProcess) -> str:
    """A node whose introspection waits for a ramdisk that never comes (the caller was to
    boot it: manage_boot=false)."""
    node = httpx.post(f"{service.url}/v1/nodes", headers=H,
                      json={"driver": "fake-hardware", "name": "stalls"}).json()
    port = httpx.post(f"{service.url}/v1/ports", headers=H,
                      json={"node_uuid": node["uuid"], "address": "52:54:00:5e:a1:01"})
    assert port.status_code == 201, port.text
    resp = httpx.post(f"{service.di_url}/v1/introspection/{node['uuid']}",
                      params={"manage_boot": "false"})
    assert resp.status_code == 202, resp.text
    return str(node["uuid"])


def test_the_alert_rules_load_into_prometheus(prometheus: Prometheus) -> None:
    groups = prometheus.get("/api/v1/rules")["groups"]
    rules = {r["name"]: r["health"] for g in groups for r in g["rules"]}
    assert rules == {"IronsightInspectionFailureRate": "ok", "IronsightInspectionStalled": "ok"}


def test_the_stall_alert_fires_when_a_node_stalls(service: ServiceProcess,
                                                  prometheus: Prometheus) -> None:
    assert "IronsightInspectionStalled" not in alerts(prometheus, "firing")
    stalled_node(service)
    until(lambda: "IronsightInspectionStalled" in alerts(prometheus, "firing"), 30,
          "stall alert firing", prometheus)
    assert "IronsightInspectionFailureRate" not in alerts(prometheus, "firing")


def dashboard_queries() -> list[tuple[str, str]]:
    dashboard = json.loads(DASHBOARD.read_text())
    found = []
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = target["expr"]
            for macro, value in GRAFANA_MACROS.items():
                expr = expr.replace(macro, value)
            found.append((panel["title"], expr))
    return found


def test_every_dashboard_query_runs_in_prometheus(prometheus: Prometheus) -> None:
    queries = dashboard_queries()
    assert len(queries) >= 10
    for title, expr in queries:
        resp = httpx.get(f"{prometheus.url}/api/v1/query", params={"query": expr}, timeout=5)
        assert resp.status_code == 200 and resp.json()["status"] == "success", (title, resp.text)


def exposed_names(text: str) -> set[str]:
    """The series names a /metrics page declares (a family without samples yet included:
    a histogram's step durations appear with the first ended attempt)."""
    suffixes = {"histogram": ("", "_bucket", "_sum", "_count"), "counter": ("", "_total"),
                "summary": ("", "_sum", "_count")}
    return {name + suffix for name, kind in re.findall(r"^# TYPE (\S+) (\w+)", text, re.M)
            for suffix in suffixes.get(kind, ("",))}


def test_the_dashboard_names_only_metrics_the_services_expose(service: ServiceProcess) -> None:
    exposed = set().union(*(exposed_names(httpx.get(f"{url}/metrics", timeout=5).text)
                            for url in (service.url, service.di_url)))
    named = {name for _, expr in dashboard_queries()
             for name in re.findall(r"\bironsight_[a-z_]+", expr)}
    assert named and named <= exposed, sorted(named - exposed)


def test_the_dashboard_is_one_grafana_can_import() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"] and dashboard["schemaVersion"] >= 36
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    assert {v["name"] for v in dashboard["templating"]["list"]} == {"datasource"}
    for panel in dashboard["panels"]:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert set(panel["gridPos"]) == {"x", "y", "w", "h"} and panel["gridPos"]["w"] <= 24
