"""discoverd's metrics (`GET /metrics` on its API): its API's latency (the toolkit times
every request; `/v1/continue` is the callback), introspections by state and their durations,
the live replicas, and for the replica serving a provisioning network, its PXE side: the
filter's size and dnsmasq's restarts."""

from __future__ import annotations

from ironsight.common.api.metrics import Metrics, set_by_label
from ironsight.discoverd import states
from ironsight.discoverd.members import Members
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe.service import PxeService


def discoverd_metrics(cache: NodeCache, members: Members, pxe: PxeService | None) -> Metrics:
    metrics = Metrics("discoverd")
    metrics.counter("ironsight_db_statements", "SQL statements run.",
                    lambda: cache.db.stats.statements)
    metrics.counter("ironsight_db_writes", "Writes: transactions and single-statement writes.",
                    lambda: cache.db.stats.writes)
    by_state = metrics.gauge("ironsight_introspections", "Introspections by state.", ["state"])
    durations = metrics.histogram(
        "ironsight_introspection_duration_seconds",
        "From start to end, of the introspections that ended in this replica.", ["state"])
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
        set_by_label(by_state, dict(await cache.count_by_state()), states.ALL)
        live.set(len(await members.live()))
        if pxe is not None:
            owner.labels(pxe.network).set(int(pxe.serving))
            entries.set(len(pxe.driver.entries))

    metrics.on_scrape(refresh)
    return metrics
