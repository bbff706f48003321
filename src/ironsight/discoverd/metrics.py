"""discoverd's metrics (`GET /metrics` on its API): its API's latency (the toolkit times
every request; `/v1/continue` is the callback), introspections by state and their durations,
inspection attempts by result and failure code with each step's duration (timeline.py),
refused callbacks by reason (rejections.py), the learned step deadlines (deadlines.py),
webhook deliveries by outcome (webhooks.py), the live replicas, and for the replica
serving a provisioning network, its PXE side: the filter's size and dnsmasq's restarts.
Counters count what ended in this replica: sum them over the replicas."""

from __future__ import annotations

from ironsight.common.api.metrics import Metrics, set_by_label
from ironsight.common.clock import utcnow
from ironsight.discoverd import states
from ironsight.discoverd.deadlines import Deadlines
from ironsight.discoverd.diagnosis import REASONS
from ironsight.discoverd.discovery import OUTCOMES, Discovery
from ironsight.discoverd.members import Members
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe.service import PxeService
from ironsight.discoverd.rejections import Rejections
from ironsight.discoverd.webhooks import OUTCOMES as WEBHOOK_OUTCOMES
from ironsight.discoverd.webhooks import Webhooks


def discoverd_metrics(cache: NodeCache, members: Members, pxe: PxeService | None,
                      rejected: Rejections | None = None,
                      deadlines: Deadlines | None = None,
                      discovery: Discovery | None = None,
                      webhooks: Webhooks | None = None) -> Metrics:
    metrics = Metrics("discoverd")
    metrics.counter("ironsight_db_statements", "SQL statements run.",
                    lambda: cache.db.stats.statements)
    metrics.counter("ironsight_db_writes", "Writes: transactions and single-statement writes.",
                    lambda: cache.db.stats.writes)
    by_state = metrics.gauge("ironsight_introspections", "Introspections by state.", ["state"])
    durations = metrics.histogram(
        "ironsight_introspection_duration_seconds",
        "From start to end, of the introspections that ended in this replica.", ["state"])
    in_progress = metrics.gauge("ironsight_inspections_in_progress",
                                "Introspections not ended (starting, waiting, processing...).")
    metrics.counters("ironsight_inspections", "Inspection attempts ended in this replica, by "
                     "result and failure code (empty on success).", ("result", "failure_code"),
                     lambda: {k: float(v) for k, v in cache.timeline.ended.items()})
    quiet = metrics.gauge("ironsight_inspection_quiet_seconds",
                          "Seconds since the last step of the running attempt that has been "
                          "quiet the longest (0: none runs): a stalled node.")
    steps = metrics.histogram("ironsight_inspection_step_seconds",
                              "Seconds each step of an ended attempt took, from the step "
                              "before it (docs/inspection.md: the phases).", ["step"])

    def observe_steps(found: dict[str, float]) -> None:
        for step, seconds in found.items():
            steps.labels(step).observe(seconds)

    cache.timeline.on_steps = observe_steps
    if rejected is not None:
        metrics.counters("ironsight_callbacks_refused", "Ramdisk reports and hellos refused "
                         "before they changed anything, by reason.", ("reason",),
                         lambda: {(r,): rejected.counts.get(r, 0) for r in REASONS})
    if discovery is not None:
        metrics.counters("ironsight_discovery_reports", "Reports of machines under no "
                         "introspection, by what discovery did: created a node, saw a known "
                         "one again, stored a conflict, refused with 429 (rate_limited: the "
                         "subnet's rate; pending_limit: too many nodes wait for approval).",
                         ("outcome",),
                         lambda: {(o,): discovery.counts.get(o, 0) for o in OUTCOMES})
    if webhooks is not None:
        metrics.counters("ironsight_webhook_deliveries", "Webhook delivery attempts this "
                         "replica made, by outcome: delivered (2xx), retried (to be tried "
                         "again after a backoff), failed (the last attempt failed).",
                         ("outcome",),
                         lambda: {(o,): webhooks.counts.get(o, 0) for o in WEBHOOK_OUTCOMES})
    limits = metrics.gauge("ironsight_inspection_step_deadline_seconds",
                           "The learned deadline of each step (docs/inspection.md), per "
                           "hardware model (\"*\": the fleet's).", ["step", "model"])
    live = metrics.gauge("ironsight_discoverd_replicas_live", "discoverd replicas alive.")
    cache.on_end = lambda state, seconds: durations.labels(state).observe(seconds)
    if pxe is not None:
        owner = metrics.gauge("ironsight_pxe_owner",
                              "1 while this replica serves the provisioning network's PXE "
                              "side (dnsmasq and the filter).", ["network"])
        entries = metrics.gauge("ironsight_pxe_filter_entries",
                                "MACs the PXE filter has an explicit verdict for.")
        metrics.counter("ironsight_dnsmasq_restarts", "Times dnsmasq was restarted.",
                        lambda: pxe.dnsmasq.restarts if pxe.dnsmasq else 0)

    async def refresh() -> None:
        await cache.timeline.observe_steps()
        counts: dict[str, float] = dict(await cache.count_by_state())
        set_by_label(by_state, counts, states.ALL)
        in_progress.set(sum(n for state, n in counts.items() if state in states.UNFINISHED))
        last = await cache.timeline.quietest()
        quiet.set(max((utcnow() - last).total_seconds(), 0.0) if last is not None else 0)
        live.set(len(await members.live()))
        if deadlines is not None:
            limits.clear()
            for found in deadlines.learned.values():
                limits.labels(found.step, found.model).set(found.seconds)
        if pxe is not None:
            owner.labels(pxe.network).set(int(pxe.serving))
            entries.set(len(pxe.driver.entries))

    metrics.on_scrape(refresh)
    return metrics
