"""`ironsight introspection ...`: discoverd's introspection API from the command line.

The commands follow `openstack baremetal introspection` and behave like `ironsight node`: data
on stdout (a table, or with `-f json` exactly the API objects), progress and errors on stderr,
exit 1 when discoverd fails or refuses, 2 on usage errors. Requests go through the discoverd
client library (`ironsight.discoverd.client`), as the bare-metal service's do.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import IO, Any, TypeVar

import click
from rich.table import Table

from ironsight.cli.options import (
    ClientGroup,
    Endpoint,
    client_options,
    cloud,
    credentials,
    runtime,
    setting,
    url,
    wait_option,
)
from ironsight.cli.output import (
    emit,
    err,
    exit_if_failed,
    for_each,
    list_table,
    object_table,
    print_table,
)
from ironsight.client.wait import wait_for_introspection
from ironsight.discoverd import client as discoverd
from ironsight.discoverd import components
from ironsight.discoverd.client import ClientError, Status

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_DISCOVERD_URL = "http://127.0.0.1:5050"
STATES = ("starting", "waiting", "processing", "finished", "error", "reapplying", "aborting")
STATUS_COLUMNS = [
    ("UUID", "uuid"), ("State", "state"), ("Finished", "finished"), ("Error", "error"),
    ("Started At", "started_at"), ("Finished At", "finished_at"),
]


class DiscoverdGroup(ClientGroup):
    """Turns a failure of discoverd into `Error: ...` on stderr and exit code 1."""

    errors = (ClientError,)


DISCOVERD = Endpoint("IRONSIGHT_DISCOVERD_URL", DEFAULT_DISCOVERD_URL,
                     "discoverd API endpoint.", discoverd.DEFAULT_TIMEOUT)


def discoverd_options(*, group: bool = False, output: bool = True) -> Callable[[F], F]:
    return client_options(group=group, output=output, endpoint=DISCOVERD)


# --- plumbing -------------------------------------------------------------------------------


def discoverd_api(ctx: click.Context, url_option: str = "url") -> discoverd.Client:
    """A pooled client for this invocation (`--wait` polls), closed when the command ends;
    its endpoint from `--url`, or from the option `url_option` of a group whose `--url` is
    another service's."""
    chosen = cloud(ctx)
    api = discoverd.Client(
        url(ctx, DEFAULT_DISCOVERD_URL, chosen.discoverd_url if chosen else None, url_option),
        timeout=setting(ctx, "timeout", discoverd.DEFAULT_TIMEOUT),
        transport=runtime(ctx).transport,
        credentials=credentials(ctx, chosen),
    )
    return ctx.with_resource(api)


def _for_each(items: Sequence[str], action: Callable[[str], None]) -> list[str]:
    """`for_each`, counting discoverd's failures (not the bare-metal API's) as failures."""
    return for_each(items, action, (ClientError,))


def _status_table(statuses: Sequence[Status]) -> Callable[[], Table]:
    return lambda: list_table(statuses, STATUS_COLUMNS)


# --- commands -------------------------------------------------------------------------------


def register(cli: click.Group) -> None:
    """Add the `introspection` command group to the top-level CLI."""
    cli.add_command(introspection)


@click.group(cls=DiscoverdGroup)
@discoverd_options(group=True)
def introspection() -> None:
    """Inspect nodes' hardware in-band through discoverd."""


@introspection.command("start")
@click.argument("nodes", metavar="NODE...", nargs=-1, required=True)
@click.option("--manage-boot/--no-manage-boot", default=None,
              help="Whether discoverd powers and PXE-boots the nodes (default: discoverd's "
                   "choice); --no-manage-boot when something else boots the ramdisk.")
@wait_option
@discoverd_options()
@click.pass_context
def introspection_start(ctx: click.Context, nodes: tuple[str, ...], manage_boot: bool | None,
                        wait: float | None) -> None:
    """Start introspection of nodes (UUIDs or names); with --wait, print the results."""
    api = discoverd_api(ctx)
    started = _for_each(nodes, lambda n: api.introspect(n, manage_boot=manage_boot))
    failures: list[str] = []
    if wait is not None and started:
        outcome = wait_for_introspection(api, started, wait, runtime(ctx).poller, err)
        failures = outcome.failures
        results = [outcome.last[n] for n in started if n in outcome.last]
        emit(ctx, results, _status_table(results))
    exit_if_failed(ctx, failures, len(started) < len(nodes))


@introspection.command("status")
@click.argument("node_ident", metavar="NODE")
@discoverd_options()
@click.pass_context
def introspection_status(ctx: click.Context, node_ident: str) -> None:
    """Show the introspection status of a node."""
    status = discoverd_api(ctx).get_status(node_ident)
    emit(ctx, status, lambda: object_table(status))


@introspection.command("list")
@click.option("--state", "states", type=click.Choice(STATES), multiple=True,
              help="Only introspections in this state; repeatable.")
@click.option("--limit", type=click.IntRange(min=1),
              help="At most this many (default: all, following pages).")
@click.option("--marker", metavar="UUID", help="Start after this node (the previous page's "
                                               "last UUID).")
@discoverd_options()
@click.pass_context
def introspection_list(ctx: click.Context, states: tuple[str, ...], limit: int | None,
                       marker: str | None) -> None:
    """List introspection statuses, newest first."""
    statuses = discoverd_api(ctx).list_statuses(marker=marker, limit=limit, state=states or None)
    emit(ctx, statuses, _status_table(statuses))


MEMBER_COLUMNS = [("Replica", "name"), ("Alive", "alive"), ("Heartbeat", "heartbeat_at"),
                  ("PXE network", "pxe_network"), ("Serving PXE since", "pxe_since")]


@introspection.command("members")
@discoverd_options()
@click.pass_context
def introspection_members(ctx: click.Context) -> None:
    """List discoverd's replicas: alive or not, and which one serves the PXE side."""
    members = discoverd_api(ctx).get_members()
    rows = [{**m, "pxe_network": (m.get("pxe") or {}).get("network") or "-",
             "pxe_since": (m.get("pxe") or {}).get("since") or "-"} for m in members]
    emit(ctx, members, lambda: list_table(rows, MEMBER_COLUMNS))


@introspection.command("abort")
@click.argument("node_ident", metavar="NODE")
@discoverd_options(output=False)
@click.pass_context
def introspection_abort(ctx: click.Context, node_ident: str) -> None:
    """Abort the introspection of a node that is waiting for its ramdisk."""
    discoverd_api(ctx).abort(node_ident)


class DataGroup(DiscoverdGroup):
    """`data NODE` (as before: the latest data) is `data show NODE`; `data history` and
    `data diff` are the subcommands beside it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["show", *args]
        return super().parse_args(ctx, args)


@introspection.group("data", cls=DataGroup)
def introspection_data() -> None:
    """A node's introspection data: the latest (`data NODE`), the ones kept (`history`),
    and what changed in the hardware between two (`diff`)."""


@introspection_data.command("show")
@click.argument("node_ident", metavar="NODE")
@click.option("--raw", is_flag=True, help="The data as the ramdisk sent it, unprocessed.")
@click.option("--id", "run", type=click.IntRange(min=1), metavar="ID",
              help="That stored introspection's data (an ID from `data history`) instead of "
                   "the latest.")
@discoverd_options(output=False)
@click.pass_context
def introspection_data_show(ctx: click.Context, node_ident: str, raw: bool,
                            run: int | None) -> None:
    """Print the introspection data of a node as JSON."""
    api = discoverd_api(ctx)
    data = (api.get_data(node_ident, raw=raw) if run is None
            else api.get_history_data(node_ident, run, raw=raw))
    click.echo(json.dumps(data, indent=2))


HISTORY_COLUMNS = [("ID", "id"), ("Started At", "started_at"), ("Received At", "received_at"),
                   ("Processed At", "processed_at")]
DIFF_COLUMNS = [("Severity", "severity"), ("Component", "component"), ("Change", "change"),
                ("What", "message")]


@introspection_data.command("history")
@click.argument("node_ident", metavar="NODE")
@discoverd_options()
@click.pass_context
def introspection_data_history(ctx: click.Context, node_ident: str) -> None:
    """List the introspections whose data discoverd keeps for a node, newest first."""
    runs = discoverd_api(ctx).get_history(node_ident)
    emit(ctx, runs, lambda: list_table(runs, HISTORY_COLUMNS))


def _pick_pair(node: str, ids: list[int], start: int | None, end: int | None
               ) -> tuple[int, int]:
    """(from, to): by default the previous and the latest; one given, its neighbour."""
    for given, hint in ((start, "--from"), (end, "--to")):
        if given is not None and given not in ids:
            raise click.BadParameter(f"node {node} has no stored introspection {given} "
                                     f"(kept: {', '.join(map(str, ids)) or 'none'})",
                                     param_hint=hint)
    if end is None:
        end = ids[0] if start is None or start != ids[0] else None
        if end is None:
            raise click.BadParameter(f"{start} is the latest; give --to", param_hint="--to")
    if start is None:
        older = [i for i in ids if i < end]
        if not older:
            raise click.UsageError(f"node {node} has no stored introspection before {end} "
                                   f"(kept: {', '.join(map(str, ids))})")
        start = older[0]
    return start, end


@introspection_data.command("diff")
@click.argument("node_ident", metavar="NODE")
@click.option("--from", "start", type=click.IntRange(min=1), metavar="ID",
              help="The earlier introspection (default: the one before --to).")
@click.option("--to", "end", type=click.IntRange(min=1), metavar="ID",
              help="The later introspection (default: the latest).")
@discoverd_options()
@click.pass_context
def introspection_data_diff(ctx: click.Context, node_ident: str, start: int | None,
                            end: int | None) -> None:
    """What changed in a node's hardware between two stored introspections (by default the
    latest against the previous): CPUs, memory, DIMMs, disks, NICs, PCI devices, firmware
    and system, each change with its severity (critical: capacity lost); summary lines
    first. With -f json, the events as a list."""
    api = discoverd_api(ctx)
    runs = api.get_history(node_ident)
    ids = [int(r["id"]) for r in runs]
    start, end = _pick_pair(node_ident, ids, start, end)
    before = api.get_history_data(node_ident, start)
    after = api.get_history_data(node_ident, end)
    found = components.events(before, after)
    started = {int(r["id"]): r.get("started_at") for r in runs}
    err(f"Introspection {start} (started {started[start]}) -> {end} "
        f"(started {started[end]}): "
        + (f"{len(found)} hardware change(s)" if found else "no hardware change"))
    rows = [e.as_dict() for e in found]
    if setting(ctx, "format", "table") == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for line in components.summary(found):
        click.echo(line)
    if rows:
        print_table(list_table(rows, DIFF_COLUMNS))


def _load_data(stream: IO[str]) -> dict[str, Any]:
    try:
        data = json.load(stream)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--data") from None
    if not isinstance(data, dict):
        raise click.BadParameter("expected a JSON object", param_hint="--data")
    return data


@introspection.command("reapply")
@click.argument("node_ident", metavar="NODE")
@click.option("--data", "data_file", type=click.File("r"), metavar="FILE",
              help="New raw data (a JSON object; `-` for stdin) to store and process instead.")
@discoverd_options(output=False)
@click.pass_context
def introspection_reapply(ctx: click.Context, node_ident: str, data_file: IO[str] | None
                          ) -> None:
    """Process a node's stored raw introspection data again (e.g. after changing hooks)."""
    data = _load_data(data_file) if data_file is not None else None
    discoverd_api(ctx).reapply(node_ident, data)
