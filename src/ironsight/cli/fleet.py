"""`ironsight fleet ...`: questions asked of every node's hardware (docs/fleet.md), answered by
discoverd (`--url` is discoverd's): CEL queries, one node's document, drift within a model.
`ironsight node list --where EXPR` asks the same query from the node commands."""

from __future__ import annotations

from typing import Any

import click

from ironsight.cli.introspection import (
    DEFAULT_DISCOVERD_URL,
    DiscoverdGroup,
    discoverd_api,
    discoverd_options,
)
from ironsight.cli.options import _remember
from ironsight.cli.output import emit, list_table, object_table

QUERY_COLUMNS = [("UUID", "uuid"), ("Name", "name"), ("State", "provision_state"),
                 ("Power", "power_state"), ("Vendor", "hardware.vendor"),
                 ("Product", "hardware.product"), ("Memory GiB", "hardware.memory_gib"),
                 ("CPUs", "hardware.cpu_count")]
EVENT_COLUMNS = [("At", "at"), ("Node", "node_uuid"), ("Severity", "severity"),
                 ("Component", "component"), ("Change", "change"), ("What", "message")]
DRIFT_COLUMNS = [("Vendor", "vendor"), ("Product", "product"), ("Node", "node"),
                 ("Field", "field"), ("Value", "value"), ("Majority", "majority")]


def discoverd_url_option(func: Any) -> Any:
    """`--discoverd-url` of a command whose `--url` is the bare-metal API's."""
    return click.option(
        "--discoverd-url", metavar="URL", expose_value=False, callback=_remember,
        envvar="IRONSIGHT_DISCOVERD_URL", show_envvar=True, default=DEFAULT_DISCOVERD_URL,
        show_default=True, help="discoverd API endpoint (fleet queries).")(func)


def register(cli: click.Group) -> None:
    cli.add_command(fleet)


@click.group(cls=DiscoverdGroup)
@discoverd_options(group=True)
def fleet() -> None:
    """Fleet hardware: CEL queries over every node's document, drift within a model."""


def print_matches(ctx: click.Context, body: dict[str, Any]) -> None:
    nodes = body.get("nodes") or []
    errors = body.get("errors") or {}
    emit(ctx, nodes, lambda: list_table(nodes, QUERY_COLUMNS))
    if errors.get("count"):
        click.echo(f"{errors['count']} node(s) could not be evaluated (they do not match), "
                   f"e.g. {errors['examples'][0]['uuid']}: {errors['examples'][0]['error']}",
                   err=True)


@fleet.command("query")
@click.argument("expression")
@click.option("--field", "fields", multiple=True, metavar="NAME",
              help="A dotted name of the node document to show (repeatable; default: a "
                   "summary).")
@discoverd_options()
@click.pass_context
def fleet_query(ctx: click.Context, expression: str, fields: tuple[str, ...]) -> None:
    """The nodes whose document matches the CEL EXPRESSION, e.g.
    'hardware.memory_gib >= 512.0 && hardware.gpu_count > 0'."""
    body = discoverd_api(ctx).fleet_query_all(expression, fields=fields or None)
    print_matches(ctx, body)


@fleet.command("show")
@click.argument("node_ident", metavar="NODE")
@discoverd_options()
@click.pass_context
def fleet_show(ctx: click.Context, node_ident: str) -> None:
    """One node's whole document: the names an expression can use."""
    doc = discoverd_api(ctx).fleet_document(node_ident)
    emit(ctx, doc, lambda: object_table(doc))


@fleet.command("events")
@click.option("--node", help="One node (UUID or name).")
@click.option("--since", help="An RFC 3339 time or a span back from now (30d, 12h, 90m).")
@click.option("--severity", type=click.Choice(["critical", "warning", "info"]),
              help="This severity or worse.")
@click.option("--component", help="dimm, disk, nic, pci, cpu, memory, firmware, system.")
@click.option("--change", type=click.Choice(["added", "removed", "changed"]))
@click.option("--limit", type=click.IntRange(1, 1000), default=100, show_default=True)
@discoverd_options()
@click.pass_context
def fleet_events(ctx: click.Context, node: str | None, since: str | None,
                 severity: str | None, component: str | None, change: str | None,
                 limit: int) -> None:
    """What inspections changed of the nodes' hardware, newest first; e.g. the DIMMs lost
    in the last month: --component dimm --change removed --since 30d."""
    events = discoverd_api(ctx).fleet_events(node=node, since=since, severity=severity,
                                             component=component, change=change,
                                             limit=limit)
    emit(ctx, events, lambda: list_table(events, EVENT_COLUMNS))


@fleet.command("export")
@click.option("--format", "kind", type=click.Choice(["ndjson", "csv", "components", "netbox"]),
              default="ndjson", show_default=True,
              help="One row per node (ndjson, csv), one per component (components), or "
                   "NetBox devices keyed by serial (netbox).")
@click.option("--where", metavar="EXPR", help="Only the nodes matching this CEL expression.")
@click.option("--output", "-o", type=click.File("wb"), default="-", show_default=True,
              help="Where to write it.")
@discoverd_options(output=False)
@click.pass_context
def fleet_export(ctx: click.Context, kind: str, where: str | None, output: Any) -> None:
    """Write the fleet's hardware out for another system, streamed."""
    for chunk in discoverd_api(ctx).fleet_export(kind, where):
        output.write(chunk)


@fleet.command("drift")
@click.option("--vendor", help="Only this vendor's models.")
@click.option("--product", help="Only this product.")
@discoverd_options()
@click.pass_context
def fleet_drift(ctx: click.Context, vendor: str | None, product: str | None) -> None:
    """Nodes whose components or firmware differ from most nodes of their (vendor,
    product)."""
    groups = discoverd_api(ctx).fleet_drift(vendor, product)
    rows = [{"vendor": g["vendor"], "product": g["product"],
             "node": n.get("name") or n["uuid"], "field": d["field"],
             "value": _shown(d, "extra", "value"), "majority": _shown(d, "missing", "majority")}
            for g in groups for n in g["drifted"] for d in n["differences"]]
    emit(ctx, groups, lambda: list_table(rows, DRIFT_COLUMNS))


def _shown(difference: dict[str, Any], part: str, whole: str) -> Any:
    """A list field shows what differs (the extra or missing items), not the whole list."""
    if isinstance(difference.get(whole), list):
        items = difference.get(part) or []
        return ", ".join(map(str, items)) or "-"
    return difference.get(whole)
