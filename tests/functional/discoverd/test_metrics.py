"""`GET /metrics` on discoverd: introspections by state and their durations, the callback's
latency, the live replicas, read by Prometheus's own parser."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from .helpers import introspect, ipa_payload, make_node

Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]


async def scrape(di: httpx.AsyncClient) -> Samples:
    resp = await di.get("/metrics")
    assert resp.status_code == 200
    samples: Samples = {}
    for family in text_string_to_metric_families(resp.text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = \
                sample.value
    return samples


async def test_an_introspection_shows_in_states_durations_and_callbacks(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    samples = await scrape(di)
    by_state = samples["ironsight_introspections"]
    assert by_state[(("state", "finished"),)] == 1
    assert by_state[(("state", "waiting"),)] == 0
    assert samples["ironsight_introspection_duration_seconds_count"][
        (("state", "finished"),)] == 1
    callbacks = samples["ironsight_api_request_seconds_count"]
    assert callbacks[(("endpoint", "continue"), ("method", "POST"), ("service", "discoverd"),
                      ("status", "200"))] == 1


async def test_the_live_replicas_are_shown(di: httpx.AsyncClient) -> None:
    assert (await scrape(di))["ironsight_discoverd_replicas_live"][()] == 1
