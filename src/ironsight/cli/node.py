"""`ironsight node ...`: bare-metal nodes, as python-ironicclient's `baremetal node` has them.

The commands follow the `baremetal` CLI so operators can move between the two. Service
failures print `Error: <message>` and exit 1; usage errors exit 2 (click's convention). The
actions that take time (provision verbs, power) can `--wait` for the node to settle.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import click
from rich.table import Table

from ironsight.cli.fleet import discoverd_url_option, print_matches
from ironsight.cli.introspection import discoverd_api
from ironsight.cli.options import (
    KEY_VALUE,
    ClientGroup,
    baremetal_api,
    client_options,
    runtime,
    setting,
    wait_option,
)
from ironsight.cli.output import (
    JsonObject,
    delete_each,
    emit,
    err,
    exit_if_failed,
    for_each,
    list_table,
    object_table,
    print_table,
)
from ironsight.client.history import STEP_KEYS, with_steps
from ironsight.client.http import ApiClient, ApiError, node_path
from ironsight.client.wait import NodeWatch, wait_for_nodes
from ironsight.discoverd import client as discoverd

# provision verb -> the state a successful action settles in
PROVISION_EXPECTED = {"manage": "manageable", "provide": "available", "inspect": "manageable"}
# power sub-command -> (API target, the power state a successful action settles in)
POWER_ACTIONS = {
    "on": ("power on", "power on"),
    "off": ("power off", "power off"),
    "reboot": ("rebooting", "power on"),
}

NODE_COLUMNS = [
    ("UUID", "uuid"), ("Name", "name"), ("Power State", "power_state"),
    ("Provisioning State", "provision_state"), ("Maintenance", "maintenance"),
]
NODE_LONG_COLUMNS = [
    ("UUID", "uuid"), ("Name", "name"), ("Driver", "driver"), ("Power State", "power_state"),
    ("Provisioning State", "provision_state"),
    ("Target Provision State", "target_provision_state"), ("Maintenance", "maintenance"),
    ("Maintenance Reason", "maintenance_reason"), ("Last Error", "last_error"),
    ("Properties", "properties"),
]
INSPECTION_COLUMNS = (("Node", "name"), ("UUID", "uuid"), ("State", "provision_state"),
                      ("CPUs", "cpus"), ("Arch", "cpu_arch"), ("Memory MiB", "memory_mb"),
                      ("Disk GiB", "local_gb"), ("Ports", "ports"),
                      ("Capabilities", "capabilities"))


def register(cli: click.Group) -> None:
    """Add the `node` command group to the top-level CLI."""
    cli.add_command(node)


def _pointer(*parts: str) -> str:
    """A JSON pointer (RFC 6901): `/` and `~` inside keys must be escaped."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


# --- waiting for an action to settle ---------------------------------------------------------


def _finish_wait(ctx: click.Context, api: ApiClient, nodes: Sequence[str], watch: NodeWatch,
                 timeout: float | None) -> list[str]:
    """The failure messages of a `--wait` (none without one)."""
    if timeout is None or not nodes:
        return []
    return wait_for_nodes(api, nodes, watch, timeout, runtime(ctx).poller, err).failures


def _provision(ctx: click.Context, nodes: Sequence[str], verb: str,
               wait: float | None) -> None:
    api = baremetal_api(ctx)
    started = for_each(
        nodes, lambda n: api.put(node_path(n, "states", "provision"), {"target": verb})
    )
    watch = NodeWatch.provision(PROVISION_EXPECTED.get(verb, ""))
    failures = _finish_wait(ctx, api, started, watch, wait)
    if verb == "inspect" and wait is not None and started:
        print_table(_inspection_table(api, started))
    exit_if_failed(ctx, failures, len(started) < len(nodes))


def _inspection_table(api: ApiClient, nodes: Sequence[str]) -> Table:
    """What inspection found, one row per node (the properties it fills)."""
    rows = []
    for ident in nodes:
        doc = api.get(node_path(ident))
        ports = api.get(node_path(doc["uuid"], "ports")).get("ports", [])
        props = doc.get("properties") or {}
        rows.append({"name": doc.get("name") or ident, "uuid": doc["uuid"],
                     "provision_state": doc.get("provision_state"),
                     "ports": ", ".join(p["address"] for p in ports) or "-",
                     **{k: props.get(k) for k in ("cpus", "cpu_arch", "memory_mb",
                                                   "local_gb", "capabilities")}})
    return list_table(rows, INSPECTION_COLUMNS)


# --- commands --------------------------------------------------------------------------------


class NodeGroup(ClientGroup):
    """`node list --where` asks discoverd: its failures are the group's too."""

    errors = (*ClientGroup.errors, discoverd.ClientError)


@click.group(cls=NodeGroup)
@client_options(group=True)
def node() -> None:
    """Manage bare-metal nodes."""


@node.command("create")
@click.option("--driver", required=True, help="Hardware type, e.g. fake or pxe_ipmitool.")
@click.option("--name", help="Unique name of the node.")
@click.option("--driver-info", type=KEY_VALUE, multiple=True, help="Repeatable.")
@click.option("--property", "properties", type=KEY_VALUE, multiple=True, help="Repeatable.")
@click.option("--extra", type=KEY_VALUE, multiple=True, help="Repeatable.")
@client_options()
@click.pass_context
def node_create(ctx: click.Context, driver: str, name: str | None,
                driver_info: Sequence[tuple[str, Any]],
                properties: Sequence[tuple[str, Any]],
                extra: Sequence[tuple[str, Any]]) -> None:
    """Enrol a node."""
    body: JsonObject = {"driver": driver}
    if name is not None:
        body["name"] = name
    for key, pairs in (("driver_info", driver_info), ("properties", properties),
                       ("extra", extra)):
        if pairs:
            body[key] = dict(pairs)
    created = baremetal_api(ctx).post("/v1/nodes", body)
    emit(ctx, created, lambda: object_table(created))


@node.command("list")
@click.option("--long", "long_", is_flag=True, help="Show more fields.")
@click.option("--provision-state", help="Only nodes in this provision state.")
@click.option("--driver", help="Only nodes with this driver.")
@click.option("--limit", type=click.IntRange(min=1),
              help="At most this many nodes (default: all, following pages).")
@click.option("--where", metavar="EXPR",
              help="Only nodes whose document matches this CEL expression (asked of "
                   "discoverd, --discoverd-url; docs/fleet.md).")
@client_options()
@discoverd_url_option
@click.pass_context
def node_list(ctx: click.Context, long_: bool, provision_state: str | None,
              driver: str | None, limit: int | None, where: str | None) -> None:
    """List nodes."""
    if where is not None:
        _list_where(ctx, where, provision_state, driver, limit)
        return
    api = baremetal_api(ctx)
    path = "/v1/nodes/detail" if long_ else "/v1/nodes"
    params = {"provision_state": provision_state, "driver": driver}
    if limit is None:
        nodes = list(api.iter_collection(path, "nodes", params))
    else:
        nodes = api.get(path, {**params, "limit": limit}).get("nodes", [])[:limit]
    columns = NODE_LONG_COLUMNS if long_ else NODE_COLUMNS
    emit(ctx, nodes, lambda: list_table(nodes, columns))


def _list_where(ctx: click.Context, where: str, provision_state: str | None,
                driver: str | None, limit: int | None) -> None:
    for name, value in (("provision_state", provision_state), ("driver", driver)):
        if value is not None:
            where = f"({where}) && {name} == {json.dumps(value)}"
    body = discoverd_api(ctx, url_option="discoverd_url").fleet_query_all(where)
    if limit is not None:
        body["nodes"] = body["nodes"][:limit]
    print_matches(ctx, body)


@node.command("show")
@click.argument("node_ident", metavar="NODE")
@client_options()
@click.pass_context
def node_show(ctx: click.Context, node_ident: str) -> None:
    """Show a node (by UUID or name)."""
    body = baremetal_api(ctx).get(node_path(node_ident))
    emit(ctx, body, lambda: object_table(body))


@node.command("set")
@click.argument("node_ident", metavar="NODE")
@click.option("--name", help="New name.")
@click.option("--driver", help="New driver.")
@click.option("--driver-info", type=KEY_VALUE, multiple=True, help="Repeatable.")
@click.option("--property", "properties", type=KEY_VALUE, multiple=True, help="Repeatable.")
@click.option("--extra", type=KEY_VALUE, multiple=True, help="Repeatable.")
@click.option("--maintenance/--no-maintenance", default=None,
              help="Put the node in or out of maintenance mode.")
@click.option("--reason", help="Maintenance reason (with --maintenance).")
@client_options(output=False)
@click.pass_context
def node_set(ctx: click.Context, node_ident: str, name: str | None, driver: str | None,
             driver_info: Sequence[tuple[str, Any]], properties: Sequence[tuple[str, Any]],
             extra: Sequence[tuple[str, Any]], maintenance: bool | None,
             reason: str | None) -> None:
    """Update fields of a node (a JSON-patch of `add` operations, as `baremetal` sends)."""
    if reason is not None and maintenance is not True:
        raise click.UsageError("--reason needs --maintenance")
    patch: list[JsonObject] = []
    for field, value in (("name", name), ("driver", driver), ("maintenance", maintenance),
                         ("maintenance_reason", reason)):
        if value is not None:
            patch.append({"op": "add", "path": _pointer(field), "value": value})
    for field, pairs in (("driver_info", driver_info), ("properties", properties),
                         ("extra", extra)):
        patch.extend({"op": "add", "path": _pointer(field, k), "value": v} for k, v in pairs)
    if not patch:
        raise click.UsageError("nothing to set")
    baremetal_api(ctx).patch(node_path(node_ident), patch)


@node.command("unset")
@click.argument("node_ident", metavar="NODE")
@click.option("--name", is_flag=True, help="Remove the name.")
@click.option("--driver-info", multiple=True, metavar="KEY", help="Repeatable.")
@click.option("--property", "properties", multiple=True, metavar="KEY", help="Repeatable.")
@click.option("--extra", multiple=True, metavar="KEY", help="Repeatable.")
@client_options(output=False)
@click.pass_context
def node_unset(ctx: click.Context, node_ident: str, name: bool, driver_info: Sequence[str],
               properties: Sequence[str], extra: Sequence[str]) -> None:
    """Remove fields of a node (a JSON-patch of `remove` operations)."""
    patch: list[JsonObject] = []
    if name:
        patch.append({"op": "remove", "path": _pointer("name")})
    for field, keys in (("driver_info", driver_info), ("properties", properties),
                        ("extra", extra)):
        patch.extend({"op": "remove", "path": _pointer(field, k)} for k in keys)
    if not patch:
        raise click.UsageError("nothing to unset")
    baremetal_api(ctx).patch(node_path(node_ident), patch)


@node.command("delete")
@click.argument("nodes", metavar="NODE...", nargs=-1, required=True)
@client_options(output=False)
@click.pass_context
def node_delete(ctx: click.Context, nodes: tuple[str, ...]) -> None:
    """Delete nodes; carries on past failures, then exits 1 if any."""
    delete_each(ctx, nodes, node_path, "node")


def _provision_command(verb: str, summary: str) -> None:
    @node.command(verb, help=summary)
    @click.argument("nodes", metavar="NODE...", nargs=-1, required=True)
    @wait_option
    @client_options(output=False)
    @click.pass_context
    def command(ctx: click.Context, nodes: tuple[str, ...], wait: float | None) -> None:
        _provision(ctx, nodes, verb, wait)


_provision_command("manage", "Move nodes to manageable (verifies their driver_info).")
_provision_command("provide", "Move nodes from manageable to available.")
_provision_command("inspect", "Inspect nodes' hardware (from manageable).")


@node.command("abort")
@click.argument("node_ident", metavar="NODE")
@client_options(output=False)
@click.pass_context
def node_abort(ctx: click.Context, node_ident: str) -> None:
    """Abort an action in progress (e.g. an inspection waiting for its callback)."""
    _provision(ctx, [node_ident], "abort", None)


@node.group("power", cls=ClientGroup)
def node_power() -> None:
    """Power nodes on, off, or reboot them."""


def _power_command(action: str) -> None:
    target, expected = POWER_ACTIONS[action]

    @node_power.command(action, help=f"Request '{target}' for nodes.")
    @click.argument("nodes", metavar="NODE...", nargs=-1, required=True)
    @wait_option
    @client_options(output=False)
    @click.pass_context
    def command(ctx: click.Context, nodes: tuple[str, ...], wait: float | None) -> None:
        api = baremetal_api(ctx)
        started = for_each(
            nodes, lambda n: api.put(node_path(n, "states", "power"), {"target": target})
        )
        failures = _finish_wait(ctx, api, started, NodeWatch.power(expected), wait)
        exit_if_failed(ctx, failures, len(started) < len(nodes))


for _action in POWER_ACTIONS:
    _power_command(_action)


@node.command("validate")
@click.argument("node_ident", metavar="NODE")
@client_options()
@click.pass_context
def node_validate(ctx: click.Context, node_ident: str) -> None:
    """Check each driver interface's configuration of a node."""
    body = baremetal_api(ctx).get(node_path(node_ident, "validate"))
    rows = [{"interface": name, **(result or {})} for name, result in sorted(body.items())]
    columns = [("Interface", "interface"), ("Result", "result"), ("Reason", "reason")]
    emit(ctx, body, lambda: list_table(rows, columns))


@node.group("boot-device", cls=ClientGroup)
def node_boot_device() -> None:
    """Set the device a node boots from."""


@node_boot_device.command("set")
@click.argument("node_ident", metavar="NODE")
@click.argument("device", type=click.Choice(["pxe", "disk"]))
@click.option("--persistent", is_flag=True, help="For all future boots, not only the next.")
@client_options(output=False)
@click.pass_context
def node_boot_device_set(ctx: click.Context, node_ident: str, device: str,
                         persistent: bool) -> None:
    """Set the boot device of a node."""
    baremetal_api(ctx).put(node_path(node_ident, "management", "boot_device"),
                           {"boot_device": device, "persistent": persistent})


@node.command("history")
@click.argument("node_ident", metavar="NODE")
@click.option("--steps/--no-steps", default=True, show_default=True,
              help="Interleave the steps of the node's inspection attempts (`node timeline`), "
                   "as events of type inspection_step.")
@client_options()
@click.pass_context
def node_history(ctx: click.Context, node_ident: str, steps: bool) -> None:
    """Show the events recorded for a node (state changes, power actions, errors), and the
    steps of its inspections, in time order."""
    api = baremetal_api(ctx)
    events = api.get(node_path(node_ident, "history")).get("history", [])
    if steps:
        try:
            attempts = api.get(node_path(node_ident, "inspection", "attempts")).get(
                "attempts", [])
        except ApiError:  # an older service, or no inspection service: the events alone
            attempts = []
        events = with_steps(events, attempts)
    columns = [("UUID", "uuid"), ("Created At", "created_at"), ("Severity", "severity"),
               ("Event", "event")]
    emit(ctx, events, lambda: list_table(events, columns))




@node.command("timeline")
@click.argument("node_ident", metavar="NODE")
@click.option("--attempt", type=click.IntRange(min=1), metavar="N",
              help="Only this attempt (default: every attempt kept; with --logs the latest).")
@click.option("--logs", is_flag=True,
              help="Print the ramdisk's log of the attempt instead (its last 64 KiB).")
@client_options()
@click.pass_context
def node_timeline(ctx: click.Context, node_ident: str, attempt: int | None,
                  logs: bool) -> None:
    """Show a node's inspection attempts: each step seen of its boot (DHCP, boot files, the
    ramdisk's hello and report), its result and, when it failed, its failure code."""
    params = {"attempt": str(attempt)} if attempt is not None else None
    if logs:
        found = baremetal_api(ctx).get(node_path(node_ident, "inspection", "logs"), params)
        if setting(ctx, "format", "table") == "json":
            click.echo(json.dumps(found, indent=2))
        else:
            click.echo(f"# attempt {found.get('attempt')}, stage {found.get('stage')}, "
                       f"updated {found.get('updated_at')}", err=True)
            click.echo(found.get("log") or "", nl=False)
        return
    attempts = baremetal_api(ctx).get(node_path(node_ident, "inspection", "attempts"),
                                      params).get("attempts", [])
    emit(ctx, attempts, lambda: _timeline_table(attempts))


def _timeline_table(attempts: Sequence[JsonObject]) -> Table:
    """One row per phase, each attempt headed by its number, result and code; `+s` counts
    from the attempt's start."""
    table = Table()
    for title in ("Attempt", "Phase", "At", "+s", "Source", "Details"):
        table.add_column(title)
    for found in attempts:
        start = _parse_time(found.get("started_at"))
        verdict = str(found.get("result"))
        if found.get("failure_code"):
            verdict += f" {found['failure_code']}"
        first = True
        for phase in found.get("phases") or []:
            at = _parse_time(phase.get("at"))
            offset = (f"{(at - start).total_seconds():.1f}"
                      if isinstance(at, dt.datetime) and isinstance(start, dt.datetime)
                      else "")
            details = ", ".join(f"{k}={v}" for k, v in phase.items()
                                if k not in STEP_KEYS and v is not None)
            table.add_row(f"{found.get('attempt')} ({verdict})" if first else "",
                          str(phase.get("phase")), str(phase.get("at") or "")[11:23], offset,
                          str(phase.get("source") or ""), details)
            first = False
        if first:
            table.add_row(f"{found.get('attempt')} ({verdict})", "", "", "", "", "")
    return table


def _parse_time(value: Any) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None
