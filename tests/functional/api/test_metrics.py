"""`GET /metrics` on the bare-metal API: Prometheus text that Prometheus's own parser reads,
with nodes by provision state, the API's latency by endpoint and the lock conflicts."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from ironsight.baremetal.service import BaremetalService

from .helpers import create_node, manage


async def scrape(api: httpx.AsyncClient) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    resp = await api.get("/metrics")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(resp.text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = \
                sample.value
    return samples


async def test_nodes_are_counted_by_provision_state(api: httpx.AsyncClient) -> None:
    await create_node(api)
    node = await create_node(api)
    await manage(api, node["uuid"])
    nodes = (await scrape(api))["ironsight_nodes"]
    assert nodes[(("provision_state", "enroll"),)] == 1
    assert nodes[(("provision_state", "manageable"),)] == 1
    assert nodes[(("provision_state", "inspect wait"),)] == 0


async def test_api_requests_are_timed_by_endpoint_and_status(api: httpx.AsyncClient) -> None:
    await create_node(api)
    await api.get("/v1/nodes/no-such-node")
    counts = (await scrape(api))["ironsight_api_request_seconds_count"]
    created = (("endpoint", "create_node"), ("method", "POST"), ("service", "baremetal"),
               ("status", "201"))
    missing = (("endpoint", "show_node"), ("method", "GET"), ("service", "baremetal"),
               ("status", "404"))
    assert counts[created] == 1
    assert counts[missing] == 1


async def test_lock_conflicts_are_counted(api: httpx.AsyncClient,
                                          service: BaremetalService) -> None:
    node = await create_node(api)
    task = await service.conductor.tasks.acquire(node["uuid"])
    try:
        resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                               json=[{"op": "add", "path": "/extra/a", "value": 1}])
        assert resp.status_code == 409
    finally:
        await task.release()
    assert (await scrape(api))["ironsight_node_lock_conflicts_total"][()] == 1


async def test_the_live_conductors_and_the_connections_are_shown(
        api: httpx.AsyncClient) -> None:
    samples = await scrape(api)
    assert samples["ironsight_conductors_live"][()] == 1
    assert set(samples["ironsight_db_connections"]) == {(("use", "idle"),),
                                                         (("use", "in_use"),)}
