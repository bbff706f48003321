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

from ironsight.cli.client import (
    ClientGroup,
    Endpoint,
    Runtime,
    _emit,
    _err,
    _exit_if_failed,
    _is_uuid,
    _list_table,
    _object_table,
    _runtime,
    _setting,
    client_options,
    wait_option,
)
from ironsight.cli.client import (
    _for_each as for_each,
)
from ironsight.discoverd import client as discoverd
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


def _api(ctx: click.Context) -> discoverd.Client:
    """A pooled client for this invocation (`--wait` polls), closed when the command ends."""
    api = discoverd.Client(
        _setting(ctx, "url", DEFAULT_DISCOVERD_URL),
        timeout=_setting(ctx, "timeout", discoverd.DEFAULT_TIMEOUT),
        transport=_runtime(ctx).transport,
    )
    return ctx.with_resource(api)


def _for_each(items: Sequence[str], action: Callable[[str], None]) -> list[str]:
    return for_each(items, action, (ClientError,))


def _status_table(statuses: Sequence[Status]) -> Callable[[], Table]:
    return lambda: _list_table(statuses, STATUS_COLUMNS)


# --- waiting --------------------------------------------------------------------------------


def _resolve(api: discoverd.Client, nodes: Sequence[str]) -> dict[str, str]:
    """Node identifier -> UUID: the batched status call takes UUIDs, users may give names."""
    return {n: n if _is_uuid(n) else str(api.get_status(n)["uuid"]) for n in nodes}


def _outcome(node: str, status: Status | None) -> str | None:
    """The failure message of a node that stopped being waited for, else None."""
    if status is None:
        return f"discoverd has no introspection of node {node}"
    if status.get("error"):
        return f"introspection of node {node} failed: {status['error']}"
    return None


def wait_for_introspection(
    api: discoverd.Client, nodes: Sequence[str], timeout: float, runtime: Runtime
) -> tuple[dict[str, Status], list[str]]:
    """Poll (one batched request per poll) until every node is finished.

    Returns the last status of each node and the failure messages (empty: all succeeded). A
    progress line goes to stderr each time a node's state changes; `timeout` 0: no limit.
    """
    deadline = runtime.clock() + timeout if timeout > 0 else None
    uuids = _resolve(api, nodes)
    last: dict[str, Status] = {}
    pending = list(nodes)
    failures: list[str] = []
    while True:
        statuses = api.get_statuses([uuids[n] for n in pending])
        for node in list(pending):
            status = statuses.get(uuids[node])
            if status is not None and last.get(node, {}).get("state") != status.get("state"):
                _err(f"node {node}: introspection {status.get('state')}")
            if status is not None:
                last[node] = status
            if status is None or status.get("finished"):
                pending.remove(node)
                failure = _outcome(node, status)
                if failure:
                    failures.append(failure)
        if not pending:
            return last, failures
        now = runtime.clock()
        if deadline is not None and now >= deadline:
            failures.extend(
                f"timed out after {timeout:g} s waiting for introspection of node {node} "
                f"(state {last[node].get('state')})" for node in pending
            )
            return last, failures
        remaining = deadline - now if deadline is not None else runtime.poll_interval
        runtime.sleep(min(runtime.poll_interval, remaining))


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
    api = _api(ctx)
    started = _for_each(nodes, lambda n: api.introspect(n, manage_boot=manage_boot))
    failures: list[str] = []
    if wait is not None and started:
        last, failures = wait_for_introspection(api, started, wait, _runtime(ctx))
        results = [last[n] for n in started if n in last]
        _emit(ctx, results, _status_table(results))
    _exit_if_failed(ctx, failures, len(started) < len(nodes))


@introspection.command("status")
@click.argument("node_ident", metavar="NODE")
@discoverd_options()
@click.pass_context
def introspection_status(ctx: click.Context, node_ident: str) -> None:
    """Show the introspection status of a node."""
    status = _api(ctx).get_status(node_ident)
    _emit(ctx, status, lambda: _object_table(status))


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
    statuses = _api(ctx).list_statuses(marker=marker, limit=limit, state=states or None)
    _emit(ctx, statuses, _status_table(statuses))


@introspection.command("abort")
@click.argument("node_ident", metavar="NODE")
@discoverd_options(output=False)
@click.pass_context
def introspection_abort(ctx: click.Context, node_ident: str) -> None:
    """Abort the introspection of a node that is waiting for its ramdisk."""
    _api(ctx).abort(node_ident)


@introspection.command("data")
@click.argument("node_ident", metavar="NODE")
@click.option("--raw", is_flag=True, help="The data as the ramdisk sent it, unprocessed.")
@discoverd_options(output=False)
@click.pass_context
def introspection_data(ctx: click.Context, node_ident: str, raw: bool) -> None:
    """Print the introspection data of a node as JSON."""
    click.echo(json.dumps(_api(ctx).get_data(node_ident, raw=raw), indent=2))


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
    _api(ctx).reapply(node_ident, data)
