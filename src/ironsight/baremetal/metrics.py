"""The bare-metal service's metrics (`GET /metrics` on its API): its API's latency (the
toolkit times every request), nodes by provision state, node lock conflicts, the workers and
database connections in use, and the live conductors that share the periodic work."""

from __future__ import annotations

from ironsight.baremetal import states
from ironsight.baremetal.conductor.manager import Conductor
from ironsight.common.api.metrics import Metrics, set_by_label
from ironsight.common.db import Database

PROVISION_STATES = (states.ENROLL, states.VERIFYING, states.MANAGEABLE, states.INSPECTING,
                    states.INSPECTWAIT, states.INSPECTFAIL, states.AVAILABLE)


def baremetal_metrics(conductor: Conductor, db: Database) -> Metrics:
    metrics = Metrics("baremetal")
    nodes = metrics.gauge("ironsight_nodes", "Nodes by provision state.", ["provision_state"])
    live = metrics.gauge("ironsight_conductors_live",
                         "Conductors alive as this one sees them (they share periodic work).")
    busy = metrics.gauge("ironsight_conductor_workers_busy",
                         "Long actions running in this conductor's worker pool.")
    pool = metrics.gauge("ironsight_db_connections", "Database connections by use.", ["use"])
    metrics.counter("ironsight_db_statements", "SQL statements run.",
                    lambda: db.stats.statements)
    metrics.counter("ironsight_db_writes", "Writes: transactions and single-statement writes.",
                    lambda: db.stats.writes)
    metrics.counter("ironsight_node_lock_conflicts",
                    "Lock requests refused because another holder had the node (409).",
                    lambda: conductor.tasks.conflicts)

    async def refresh() -> None:
        set_by_label(nodes, dict(await conductor.records.count_by_state()), PROVISION_STATES)
        live.set(len(conductor.share.members))
        busy.set(conductor.workers.busy)
        set_by_label(pool, dict(db.pool_status()))

    metrics.on_scrape(refresh)
    return metrics
