"""`ironsight discovery ...`: machines nobody enrolled (docs/discovery.md).

The approval of a discovered node is the bare-metal API's (`--url`); the records behind it
(where it came from, its BMC check, the manifest, the conflicts) are discoverd's
(`--discoverd-url`)."""

from __future__ import annotations

import fnmatch
import ipaddress
from pathlib import Path
from typing import Any

import click

from ironsight.cli.introspection import DEFAULT_DISCOVERD_URL, discoverd_api
from ironsight.cli.options import (
    ClientGroup,
    _remember,
    baremetal_api,
    client_options,
)
from ironsight.cli.output import emit, err, list_table, object_table
from ironsight.client import http
from ironsight.discoverd import client as discoverd
from ironsight.discoverd.conflicts import RESOLUTIONS

STATUSES = ("pending", "approved", "rejected")
NODE_COLUMNS = [("UUID", "uuid"), ("Name", "name"), ("Approval", "discovery"),
                ("State", "provision_state"), ("Driver", "driver"), ("Serial", "serial"),
                ("From", "source_address"), ("BMC check", "bmc_check"),
                ("Manifest", "manifest_serial"), ("Seen again", "seen_count"),
                ("Created", "created_at")]
CONFLICT_COLUMNS = [("ID", "id"), ("At", "at"), ("Signals", "signals"), ("Nodes", "matched"),
                    ("Serial", "serial"), ("MACs", "macs"), ("From", "source_address"),
                    ("Repeats", "repeats"), ("Resolution", "resolution")]


class DiscoveryGroup(ClientGroup):
    errors = (http.ClientError, discoverd.ClientError)


def register(cli: click.Group) -> None:
    cli.add_command(discovery)


def _discoverd_option(group: bool) -> Any:
    return click.option(
        "--discoverd-url", metavar="URL", expose_value=False, callback=_remember,
        envvar="IRONSIGHT_DISCOVERD_URL" if group else None, show_envvar=group,
        default=DEFAULT_DISCOVERD_URL if group else None, show_default=group,
        help="discoverd API endpoint (the discovery records, conflicts and manifest).")


def _discoverd(ctx: click.Context) -> discoverd.Client:
    return discoverd_api(ctx, url_option="discoverd_url")


@click.group(cls=DiscoveryGroup)
@client_options(group=True)
@_discoverd_option(group=True)
def discovery() -> None:
    """Machines nobody enrolled: discovered nodes, their approval, conflicts, the manifest."""


def _nodes(ctx: click.Context, status: str | None) -> list[dict[str, Any]]:
    """The discovered nodes (bare-metal API) with discoverd's record of each."""
    api = baremetal_api(ctx)
    found: list[dict[str, Any]] = []
    marker: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000}
        if status is not None:
            params["status"] = status
        if marker is not None:
            params["marker"] = marker
        page = api.get("/v1/discovery/nodes", params).get("nodes") or []
        found += page
        if len(page) < 1000:
            break
        marker = page[-1]["uuid"]
    records = {r["node_uuid"]: r for r in _discoverd(ctx).get_discovery().get("nodes") or []}
    for node in found:
        record = records.get(node["uuid"]) or {}
        probe = record.get("bmc_probe") or {}
        node.update({k: record.get(k) for k in ("serial", "system_uuid", "source_address",
                                                "subnet", "manifest_serial", "seen_count",
                                                "last_seen_at", "bmc_probe")})
        node["bmc_check"] = (
            "" if not probe else
            f"{probe.get('protocol') or 'unreachable'}"
            + ("" if probe.get("serial_match") is None else
               ", serial matches" if probe["serial_match"] else ", ANOTHER MACHINE'S"))
    return found


def _filtered(nodes: list[dict[str, Any]], idents: tuple[str, ...], subnet: str | None,
              serial: str | None) -> list[dict[str, Any]]:
    if idents:
        wanted = set(idents)
        chosen = [n for n in nodes if n["uuid"] in wanted or n.get("name") in wanted]
        missing = wanted - {n["uuid"] for n in chosen} - {n.get("name") for n in chosen}
        if missing:
            raise click.ClickException(f"not discovered nodes (or not in this set): "
                                       f"{', '.join(sorted(missing))}")
        nodes = chosen
    if subnet is not None:
        network = ipaddress.ip_network(subnet, strict=False)
        nodes = [n for n in nodes if n.get("source_address")
                 and ipaddress.ip_address(n["source_address"]) in network]
    if serial is not None:
        nodes = [n for n in nodes if fnmatch.fnmatchcase(n.get("serial") or "", serial)]
    return nodes


@discovery.command("list")
@click.option("--status", type=click.Choice([*STATUSES, "all"]), default="all",
              show_default=True, help="Only the nodes of this approval.")
@click.option("--subnet", metavar="CIDR", help="Only the nodes discovered from this subnet.")
@click.option("--serial", metavar="GLOB", help="Only the nodes whose serial matches.")
@client_options()
@_discoverd_option(group=False)
@click.pass_context
def discovery_list(ctx: click.Context, status: str, subnet: str | None,
                   serial: str | None) -> None:
    """The discovered nodes: their approval, where they came from, their BMC check."""
    found = _filtered(_nodes(ctx, None if status == "all" else status), (), subnet, serial)
    emit(ctx, found, lambda: list_table(found, NODE_COLUMNS))


def _decide(ctx: click.Context, verb: str, idents: tuple[str, ...], subnet: str | None,
            serial: str | None, every: bool) -> None:
    if not (idents or subnet or serial or every):
        raise click.UsageError("name nodes, or choose a set: --subnet, --serial or --all")
    status = "pending" if verb == "approve" else None
    chosen = _filtered(_nodes(ctx, status), idents, subnet, serial)
    if not chosen:
        err("No discovered node matches: nothing done")
        return
    answer = baremetal_api(ctx).post(f"/v1/discovery/{verb}",
                                     {"nodes": [n["uuid"] for n in chosen]})
    done = answer.get("nodes") or []
    emit(ctx, done, lambda: list_table(done, [("UUID", "uuid"), ("Name", "name"),
                                              ("Approval", "discovery")]))


def _decision(verb: str, help_text: str) -> Any:
    @discovery.command(verb, help=help_text)
    @click.argument("nodes", nargs=-1)
    @click.option("--subnet", metavar="CIDR", help="Every node discovered from this subnet.")
    @click.option("--serial", metavar="GLOB", help="Every node whose serial matches.")
    @click.option("--all", "every", is_flag=True, help="Every node of the set (see above).")
    @client_options()
    @_discoverd_option(group=False)
    @click.pass_context
    def command(ctx: click.Context, nodes: tuple[str, ...], subnet: str | None,
                serial: str | None, every: bool) -> None:
        _decide(ctx, verb, nodes, subnet, serial, every)

    return command


_decision("approve", "Approve discovered nodes (admin): they leave quarantine and take the "
          "normal path (manage, then inspect). One call for the named nodes or a filtered set "
          "of the pending ones.")
_decision("reject", "Reject discovered nodes (admin): they stay quarantined for good (their "
          "MACs keep identifying them: the machine booting again creates nothing); delete "
          "one to have it discovered anew.")


@discovery.command("conflicts")
@click.option("--all", "every", is_flag=True, help="The resolved ones too.")
@click.option("--limit", type=click.IntRange(1, 1000), default=100, show_default=True)
@client_options()
@_discoverd_option(group=False)
@click.pass_context
def discovery_conflicts(ctx: click.Context, every: bool, limit: int) -> None:
    """Reports that named known nodes ambiguously: what matched, for an operator to
    resolve (`ironsight discovery resolve`)."""
    found = _discoverd(ctx).get_discovery_conflicts(every=every, limit=limit)
    rows = [{**c, "signals": "; ".join(f"{s['signal']} {s['value']}"
                                       + (f" -> {s['node']}" if s.get("node") else "")
                                       for s in c.get("signals") or []),
             "matched": ", ".join(c.get("matched") or []),
             "macs": ", ".join(c.get("macs") or [])} for c in found]
    emit(ctx, found, lambda: list_table(rows, CONFLICT_COLUMNS))


@discovery.command("resolve")
@click.argument("conflict", type=int)
@click.argument("resolution", type=click.Choice(RESOLUTIONS))
@click.option("--node", metavar="UUID", help="same_machine: which matched node it is "
              "(needed when it matched several).")
@client_options()
@_discoverd_option(group=False)
@click.pass_context
def discovery_resolve(ctx: click.Context, conflict: int, resolution: str,
                      node: str | None) -> None:
    """Resolve a conflict (admin): same_machine (a replaced board: the node's ports become
    the machine's MACs), new_machine (a node is created from its report) or ignore."""
    answer = _discoverd(ctx).resolve_discovery_conflict(conflict, resolution, node)
    emit(ctx, answer, lambda: object_table(answer))


@discovery.group("manifest")
def manifest() -> None:
    """The expected delivery: machines on it are named, get their BMC credentials and are
    approved when they are discovered."""


@manifest.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@client_options()
@_discoverd_option(group=False)
@click.pass_context
def manifest_import(ctx: click.Context, file: Path) -> None:
    """Load a manifest CSV (docs/discovery.md: its columns); rows of known serials are
    replaced. Every row is checked first: one bad row imports nothing."""
    answer = _discoverd(ctx).import_manifest(file.read_text(encoding="utf-8-sig"))
    emit(ctx, answer, lambda: object_table(answer))


@manifest.command("status")
@client_options()
@_discoverd_option(group=False)
@click.pass_context
def manifest_status(ctx: click.Context) -> None:
    """What arrived (and its node), what is missing, and the extras (discovered nodes on no
    row)."""
    found = _discoverd(ctx).get_manifest_status()
    rows = ([{"state": "arrived", **r} for r in found.get("arrived") or []]
            + [{"state": "missing", **r, "macs": ", ".join(r.get("macs") or [])}
               for r in found.get("missing") or []]
            + [{"state": "extra", **r} for r in found.get("extras") or []])
    emit(ctx, found, lambda: list_table(rows, [
        ("State", "state"), ("Serial", "serial"), ("Name", "name"), ("Node", "node_uuid"),
        ("MACs", "macs"), ("From", "source_address"), ("At", "arrived_at")]))


@discovery.command("non-unique-macs")
@client_options()
@_discoverd_option(group=False)
@click.pass_context
def discovery_non_unique(ctx: click.Context) -> None:
    """MACs that never identify a machine: built in, configured, and found on two machines."""
    found = _discoverd(ctx).get_non_unique_macs()
    emit(ctx, found, lambda: list_table(found.get("macs") or [], [
        ("MAC", "mac"), ("Source", "source"), ("Why", "reason")]))
