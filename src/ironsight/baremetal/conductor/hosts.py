"""The conductors as the API shows them: one per host (`[DEFAULT] host`), folding the
replicas that run there.

Each replica registers under its own name, `host:pid`: that identity owns node locks and
lets the others tell a dead replica from a live one. Clients know Ironic's model, where a
conductor is a host: the hostname that `GET /v1/conductors` lists is what a node's
`conductor` field and a driver's `hosts` show. So replicas sharing a host are one conductor
to the API: alive while any of them is, with the hardware types of all.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ironsight.common.exceptions import NotFound


def host_of(replica: str) -> str:
    """The host of a replica's name (`host:pid`)."""
    host, sep, pid = replica.rpartition(":")
    return host if sep and pid.isdigit() else replica


@dataclass(frozen=True)
class HostConductor:
    hostname: str
    conductor_group: str
    alive: bool
    drivers: tuple[str, ...]
    created_at: dt.datetime
    updated_at: dt.datetime
    id: int  # the first replica's registration: Ironic's default sort



def fold(rows: Iterable[dict[str, Any]], alive_since: dt.datetime) -> list[HostConductor]:
    """One entry per host from the replicas' registrations (`bm_conductors` rows); a replica
    that heartbeated at `alive_since` or later is alive. The group shown is the live
    replicas' (the first by name when they differ: a misconfiguration)."""
    by_host: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_host.setdefault(host_of(row["name"]), []).append(row)
    found = []
    for host, replicas in by_host.items():
        live = sorted((r for r in replicas if r["heartbeat_at"] >= alive_since),
                      key=lambda r: r["name"])
        group_from = live or sorted(replicas, key=lambda r: r["name"])
        found.append(HostConductor(
            hostname=host, conductor_group=group_from[0]["conductor_group"] or "",
            alive=bool(live),
            drivers=tuple(sorted({d for r in (live or replicas) for d in r["drivers"] or []})),
            created_at=min(r["started_at"] for r in replicas),
            updated_at=max(r["heartbeat_at"] for r in replicas),
            id=min(r["id"] for r in replicas)))
    return found


def page(entries: list[HostConductor], *, sort_key: str, desc: bool, marker: str | None,
         limit: int) -> list[HostConductor]:
    """Ironic's pagination of the folded list: sorted (then by id), the entries after the
    one named `marker` (unknown: 404, as in Ironic), at most `limit`."""
    ordered = sorted(entries, key=lambda e: (getattr(e, sort_key), e.id), reverse=desc)
    if marker is not None:
        names = [e.hostname for e in ordered]
        if marker not in names:
            raise NotFound(f"Conductor {marker} could not be found.")
        ordered = ordered[names.index(marker) + 1:]
    return ordered[:limit]
