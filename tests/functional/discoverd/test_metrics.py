"""`GET /metrics` on discoverd: introspections by state and their durations, the callback's
latency, the live replicas, read by Prometheus's own parser."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from .helpers import introspect, ipa_payload, make_node, start

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


async def test_ended_attempts_are_counted_by_result_and_code_with_their_steps(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    samples = await scrape(di)
    assert samples["ironsight_inspections_total"][
        (("failure_code", ""), ("result", "success"))] == 1
    steps = samples["ironsight_inspection_step_seconds_count"]
    assert steps[(("step", "report_received"),)] == 1
    assert steps[(("step", "finished"),)] == 1
    assert samples["ironsight_inspections_in_progress"][()] == 0


async def test_refused_callbacks_are_counted_by_reason(di: httpx.AsyncClient) -> None:
    resp = await di.post("/v1/hello", json={"macs": ["52:54:00:99:99:99"]})
    assert resp.status_code == 404
    refused = (await scrape(di))["ironsight_callbacks_refused_total"]
    assert refused[(("reason", "lookup_failed"),)] == 1
    assert refused[(("reason", "bad_token"),)] == 0


async def test_a_running_attempt_is_in_progress_and_its_quiet_time_shows(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    assert (await scrape(di))["ironsight_inspection_quiet_seconds"][()] == 0
    await start(di, m.uuid)
    samples = await scrape(di)
    assert samples["ironsight_inspections_in_progress"][()] == 1
    assert 0 < samples["ironsight_inspection_quiet_seconds"][()] < 60
