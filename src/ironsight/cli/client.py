"""`ironsight node|port|driver`: an operator CLI for the Ironic-compatible bare-metal API.

The commands follow python-ironicclient's `baremetal` CLI, so operators can move between the
two. Data goes to stdout (a table, or with `-f json` exactly the API objects); progress lines
and errors go to stderr, so `-f json` output can always be piped. Service failures print
`Error: <message>` and exit 1; usage errors exit 2 (click's convention).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click
import httpx
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ironsight.cli import http
from ironsight.cli.http import ApiClient, ClientError, quote_segment

F = TypeVar("F", bound=Callable[..., Any])
JsonObject = dict[str, Any]

_META = "ironsight.client."
PIPE_WIDTH = 200  # tables written to a pipe are not squeezed to 80 columns

# provision verb -> the state a successful action settles in
PROVISION_EXPECTED = {"manage": "manageable", "provide": "available", "inspect": "manageable"}
# power sub-command -> (API target, the power state a successful action settles in)
POWER_ACTIONS = {
    "on": ("power on", "power on"),
    "off": ("power off", "power off"),
    "reboot": ("rebooting", "power on"),
}


@dataclass
class Runtime:
    """What tests replace: the HTTP transport and the clock that `--wait` polls with.

    Give one as click's `obj` (`CliRunner().invoke(cli, args, obj=Runtime(...))`).
    """

    transport: httpx.BaseTransport | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    poll_interval: float = 2.0


class ClientGroup(click.Group):
    """Turns a failure of the remote service into `Error: ...` on stderr and exit code 1."""

    errors: tuple[type[Exception], ...] = (ClientError,)  # what counts as a service failure

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except self.errors as exc:
            raise click.ClickException(str(exc)) from exc


# --- options shared by groups and commands -------------------------------------------------


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Store a setting in the context tree's shared `meta`, the innermost given value winning.

    Groups parse first and always supply a value (default or environment); a command's option
    defaults to None so that `ironsight node --url X list` and `... list --url X` both work.
    """
    if value is not None and param.name:
        ctx.meta[_META + param.name] = value
    return value


def _setting(ctx: click.Context, name: str, default: Any) -> Any:
    return ctx.meta.get(_META + name, default)


@dataclass(frozen=True)
class Endpoint:
    """Where a command group's `--url` points by default."""

    envvar: str
    default_url: str
    description: str
    default_timeout: float = http.DEFAULT_TIMEOUT


BAREMETAL = Endpoint("IRONSIGHT_URL", http.DEFAULT_BAREMETAL_URL, "Bare-metal API endpoint.")


def client_options(*, group: bool = False, output: bool = True,
                   endpoint: Endpoint = BAREMETAL) -> Callable[[F], F]:
    """`--url`, `--timeout` and (for commands that print data) `-f/--format`.

    The group's values are defaults that a command's own options override.
    """

    def decorate(func: F) -> F:
        options = [
            click.option(
                "--url", metavar="URL", expose_value=False, callback=_remember,
                envvar=endpoint.envvar if group else None, show_envvar=group,
                default=endpoint.default_url if group else None, show_default=group,
                help=endpoint.description,
            ),
            click.option(
                "--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
                expose_value=False, callback=_remember,
                default=endpoint.default_timeout if group else None, show_default=group,
                help="Seconds to wait for each HTTP response.",
            ),
        ]
        if output:
            options.append(click.option(
                "-f", "--format", "format", type=click.Choice(["table", "json"]),
                expose_value=False, callback=_remember,
                default="table" if group else None, show_default=group,
                help="A table, or exactly the API objects as JSON.",
            ))
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def wait_option(func: F) -> F:
    return click.option(
        "--wait", type=click.FloatRange(min=0), metavar="SECONDS", default=None,
        help="Wait up to SECONDS (0: no limit) for the action to finish; exit 1 if it fails.",
    )(func)


class KeyValue(click.ParamType):
    """`key=value`, the value JSON-decoded when it can be (`cpus=4` gives 4)."""

    name = "key=value"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, Any]:
        if isinstance(value, tuple):
            return value
        key, sep, raw = str(value).partition("=")
        if not sep or not key:
            self.fail(f"expected KEY=VALUE, got {value!r}", param, ctx)
        try:
            return key, json.loads(raw)
        except ValueError:
            return key, raw


KEY_VALUE = KeyValue()


# --- plumbing -------------------------------------------------------------------------------


def _runtime(ctx: click.Context) -> Runtime:
    return ctx.find_object(Runtime) or Runtime()


def _api(ctx: click.Context) -> ApiClient:
    """A client for this invocation, closed when the command ends."""
    client = http.baremetal_client(
        _setting(ctx, "url", http.DEFAULT_BAREMETAL_URL),
        timeout=_setting(ctx, "timeout", http.DEFAULT_TIMEOUT),
        transport=_runtime(ctx).transport,
    )
    return ctx.with_resource(client)


def _node_path(node: str, *rest: str) -> str:
    return "/".join(["/v1/nodes", quote_segment(node), *rest])


def _pointer(*parts: str) -> str:
    """A JSON pointer (RFC 6901): `/` and `~` inside keys must be escaped."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _err(message: str) -> None:
    click.echo(message, err=True)


def _print_table(table: Table) -> None:
    """Print without losing data: wider than the terminal rather than cropped or squeezed.

    Each column is at least as wide as its longest header word (UUID columns: a whole UUID);
    when the terminal cannot fit that, lines get longer and the terminal wraps them.
    """
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=PIPE_WIDTH)
    needed = Measurement.get(console, console.options.update_width(10_000), table).minimum
    if needed > console.width:
        console = Console(highlight=False, width=needed)
    console.print(table)


def _cell(value: Any) -> Text:
    """Plain text (never rich markup: names may contain `[`); containers as JSON."""
    if isinstance(value, dict | list):
        return Text(json.dumps(value, sort_keys=True))
    return Text(str(value))


def _list_table(rows: Iterable[JsonObject], columns: Sequence[tuple[str, str]]) -> Table:
    table = Table()
    for header, key in columns:
        is_uuid = key == "uuid" or key.endswith("_uuid")
        min_width = 36 if is_uuid else max(len(word) for word in header.split())
        table.add_column(header, overflow="fold", no_wrap=is_uuid, min_width=min_width)
    for row in rows:
        table.add_row(*(_cell(row.get(key)) for _, key in columns))
    return table


def _object_table(obj: JsonObject) -> Table:
    table = Table()
    table.add_column("Field", no_wrap=True)
    table.add_column("Value", overflow="fold", min_width=36)
    for key in sorted(obj):
        if key != "links":
            table.add_row(key, _cell(obj[key]))
    return table


def _emit(ctx: click.Context, data: Any, table: Callable[[], Table]) -> None:
    if _setting(ctx, "format", "table") == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        _print_table(table())


def _for_each(items: Sequence[str], action: Callable[[str], None],
              errors: tuple[type[Exception], ...] = (ClientError,)) -> list[str]:
    """Run `action` on every item, reporting failures without stopping; the ones that worked."""
    done: list[str] = []
    for item in items:
        try:
            action(item)
        except errors as exc:
            _err(f"Error: {exc}")
        else:
            done.append(item)
    return done


# --- waiting for a state change -------------------------------------------------------------


@dataclass(frozen=True)
class Watch:
    """Which node fields settle an action, and the state a successful one settles in."""

    state_field: str
    target_field: str
    expected: str
    label: str


def _progress(node: str, watch: Watch, state: Any, target: Any) -> str:
    line = f"node {node}: {watch.label} {state}"
    return f"{line} (target {target})" if target else line


def wait_for_nodes(
    api: ApiClient, nodes: Sequence[str], watch: Watch, timeout: float, runtime: Runtime
) -> list[str]:
    """Poll each node until its target field is empty; the failure messages (empty: success).

    One progress line goes to stderr each time a node's (state, target) changes. `timeout` 0
    means no limit.
    """
    deadline = runtime.clock() + timeout if timeout > 0 else None
    seen: dict[str, tuple[Any, Any]] = {}
    pending = list(nodes)
    failures: list[str] = []
    while True:
        for node in list(pending):
            body = api.get(_node_path(node))
            state, target = body.get(watch.state_field), body.get(watch.target_field)
            if seen.get(node) != (state, target):
                seen[node] = (state, target)
                _err(_progress(node, watch, state, target))
            if target:
                continue
            pending.remove(node)
            if state != watch.expected:
                reason = body.get("last_error") or "no error reported"
                failures.append(f"node {node} ended in {watch.label} {state!r}: {reason}")
        if not pending:
            return failures
        now = runtime.clock()
        if deadline is not None and now >= deadline:
            for node in pending:
                state, target = seen[node]
                failures.append(
                    f"timed out after {timeout:g} s waiting for node {node} to reach "
                    f"{watch.expected!r} ({watch.label} {state}, target {target})"
                )
            return failures
        remaining = deadline - now if deadline is not None else runtime.poll_interval
        runtime.sleep(min(runtime.poll_interval, remaining))


def _finish_wait(ctx: click.Context, api: ApiClient, nodes: Sequence[str], watch: Watch,
                 timeout: float | None) -> list[str]:
    if timeout is None or not nodes:
        return []
    return wait_for_nodes(api, nodes, watch, timeout, _runtime(ctx))


def _exit_if_failed(ctx: click.Context, failures: Sequence[str], had_errors: bool) -> None:
    for message in failures:
        _err(f"Error: {message}")
    if failures or had_errors:
        ctx.exit(1)


def _provision(ctx: click.Context, nodes: Sequence[str], verb: str,
               wait: float | None) -> None:
    api = _api(ctx)
    started = _for_each(
        nodes, lambda n: api.put(_node_path(n, "states", "provision"), {"target": verb})
    )
    watch = Watch("provision_state", "target_provision_state",
                  PROVISION_EXPECTED.get(verb, ""), "provision state")
    failures = _finish_wait(ctx, api, started, watch, wait)
    if verb == "inspect" and wait is not None and started:
        _print_table(_inspection_table(api, started))
    _exit_if_failed(ctx, failures, len(started) < len(nodes))


INSPECTION_COLUMNS = (("Node", "name"), ("UUID", "uuid"), ("State", "provision_state"),
                      ("CPUs", "cpus"), ("Arch", "cpu_arch"), ("Memory MiB", "memory_mb"),
                      ("Disk GiB", "local_gb"), ("Ports", "ports"),
                      ("Capabilities", "capabilities"))


def _inspection_table(api: ApiClient, nodes: Sequence[str]) -> Table:
    """What inspection found, one row per node (the properties it fills)."""
    rows = []
    for ident in nodes:
        doc = api.get(_node_path(ident))
        ports = api.get(_node_path(doc["uuid"], "ports")).get("ports", [])
        props = doc.get("properties") or {}
        rows.append({"name": doc.get("name") or ident, "uuid": doc["uuid"],
                     "provision_state": doc.get("provision_state"),
                     "ports": ", ".join(p["address"] for p in ports) or "-",
                     **{k: props.get(k) for k in ("cpus", "cpu_arch", "memory_mb",
                                                   "local_gb", "capabilities")}})
    return _list_table(rows, INSPECTION_COLUMNS)


# --- register -------------------------------------------------------------------------------


def register(cli: click.Group) -> None:
    """Add the `node`, `port` and `driver` command groups to the top-level CLI."""
    cli.add_command(node)
    cli.add_command(port)
    cli.add_command(driver)


# --- node -----------------------------------------------------------------------------------

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


@click.group(cls=ClientGroup)
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
    created = _api(ctx).post("/v1/nodes", body)
    _emit(ctx, created, lambda: _object_table(created))


@node.command("list")
@click.option("--long", "long_", is_flag=True, help="Show more fields.")
@click.option("--provision-state", help="Only nodes in this provision state.")
@click.option("--driver", help="Only nodes with this driver.")
@click.option("--limit", type=click.IntRange(min=1),
              help="At most this many nodes (default: all, following pages).")
@client_options()
@click.pass_context
def node_list(ctx: click.Context, long_: bool, provision_state: str | None,
              driver: str | None, limit: int | None) -> None:
    """List nodes."""
    api = _api(ctx)
    path = "/v1/nodes/detail" if long_ else "/v1/nodes"
    params = {"provision_state": provision_state, "driver": driver}
    if limit is None:
        nodes = list(api.iter_collection(path, "nodes", params))
    else:
        nodes = api.get(path, {**params, "limit": limit}).get("nodes", [])[:limit]
    columns = NODE_LONG_COLUMNS if long_ else NODE_COLUMNS
    _emit(ctx, nodes, lambda: _list_table(nodes, columns))


@node.command("show")
@click.argument("node_ident", metavar="NODE")
@client_options()
@click.pass_context
def node_show(ctx: click.Context, node_ident: str) -> None:
    """Show a node (by UUID or name)."""
    body = _api(ctx).get(_node_path(node_ident))
    _emit(ctx, body, lambda: _object_table(body))


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
    _api(ctx).patch(_node_path(node_ident), patch)


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
    _api(ctx).patch(_node_path(node_ident), patch)


@node.command("delete")
@click.argument("nodes", metavar="NODE...", nargs=-1, required=True)
@client_options(output=False)
@click.pass_context
def node_delete(ctx: click.Context, nodes: tuple[str, ...]) -> None:
    """Delete nodes; carries on past failures, then exits 1 if any."""
    api = _api(ctx)

    def delete(ident: str) -> None:
        api.delete(_node_path(ident))
        _err(f"Deleted node {ident}")

    _exit_if_failed(ctx, [], len(_for_each(nodes, delete)) < len(nodes))


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
        api = _api(ctx)
        started = _for_each(
            nodes, lambda n: api.put(_node_path(n, "states", "power"), {"target": target})
        )
        watch = Watch("power_state", "target_power_state", expected, "power state")
        failures = _finish_wait(ctx, api, started, watch, wait)
        _exit_if_failed(ctx, failures, len(started) < len(nodes))


for _action in POWER_ACTIONS:
    _power_command(_action)


@node.command("validate")
@click.argument("node_ident", metavar="NODE")
@client_options()
@click.pass_context
def node_validate(ctx: click.Context, node_ident: str) -> None:
    """Check each driver interface's configuration of a node."""
    body = _api(ctx).get(_node_path(node_ident, "validate"))
    rows = [{"interface": name, **(result or {})} for name, result in sorted(body.items())]
    columns = [("Interface", "interface"), ("Result", "result"), ("Reason", "reason")]
    _emit(ctx, body, lambda: _list_table(rows, columns))


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
    _api(ctx).put(_node_path(node_ident, "management", "boot_device"),
                  {"boot_device": device, "persistent": persistent})


@node.command("history")
@click.argument("node_ident", metavar="NODE")
@client_options()
@click.pass_context
def node_history(ctx: click.Context, node_ident: str) -> None:
    """Show the events recorded for a node (state changes, power actions, errors)."""
    events = _api(ctx).get(_node_path(node_ident, "history")).get("history", [])
    columns = [("UUID", "uuid"), ("Created At", "created_at"), ("Severity", "severity"),
               ("Event", "event")]
    _emit(ctx, events, lambda: _list_table(events, columns))


# --- port -----------------------------------------------------------------------------------

PORT_COLUMNS = [("UUID", "uuid"), ("Address", "address")]
PORT_LONG_COLUMNS = [
    ("UUID", "uuid"), ("Address", "address"), ("Node UUID", "node_uuid"),
    ("PXE Enabled", "pxe_enabled"), ("Local Link Connection", "local_link_connection"),
    ("Extra", "extra"), ("Created At", "created_at"),
]


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


@click.group(cls=ClientGroup)
@client_options(group=True)
def port() -> None:
    """Manage ports (a node's network interfaces, by MAC address)."""


@port.command("create")
@click.argument("address")
@click.option("--node", "node_ident", required=True, metavar="NODE",
              help="UUID or name of the node the port belongs to.")
@click.option("--pxe-enabled/--no-pxe-enabled", default=None,
              help="Whether the node PXE-boots from this port (server default: yes).")
@click.option("--extra", type=KEY_VALUE, multiple=True, help="Repeatable.")
@click.option("--local-link-connection", type=KEY_VALUE, multiple=True,
              help="switch_id=, port_id=, switch_info=; repeatable.")
@client_options()
@click.pass_context
def port_create(ctx: click.Context, address: str, node_ident: str, pxe_enabled: bool | None,
                extra: Sequence[tuple[str, Any]],
                local_link_connection: Sequence[tuple[str, Any]]) -> None:
    """Create a port; a node name is resolved to its UUID (the API wants a UUID)."""
    api = _api(ctx)
    node_uuid = node_ident if _is_uuid(node_ident) else api.get(_node_path(node_ident))["uuid"]
    body: JsonObject = {"address": address, "node_uuid": node_uuid}
    if pxe_enabled is not None:
        body["pxe_enabled"] = pxe_enabled
    if extra:
        body["extra"] = dict(extra)
    if local_link_connection:
        body["local_link_connection"] = dict(local_link_connection)
    created = api.post("/v1/ports", body)
    _emit(ctx, created, lambda: _object_table(created))


@port.command("list")
@click.option("--node", "node_ident", metavar="NODE", help="Only ports of this node.")
@click.option("--address", help="Only the port with this MAC address.")
@click.option("--long", "long_", is_flag=True, help="Show more fields.")
@client_options()
@click.pass_context
def port_list(ctx: click.Context, node_ident: str | None, address: str | None,
              long_: bool) -> None:
    """List ports."""
    path = "/v1/ports/detail" if long_ else "/v1/ports"
    params = {"node": node_ident, "address": address}
    ports = list(_api(ctx).iter_collection(path, "ports", params))
    columns = PORT_LONG_COLUMNS if long_ else PORT_COLUMNS
    _emit(ctx, ports, lambda: _list_table(ports, columns))


@port.command("show")
@click.argument("port_ident", metavar="PORT")
@click.option("--address", "by_address", is_flag=True, help="PORT is a MAC address.")
@client_options()
@click.pass_context
def port_show(ctx: click.Context, port_ident: str, by_address: bool) -> None:
    """Show a port, by UUID or (with --address) by MAC address."""
    api = _api(ctx)
    if by_address:
        found = api.get("/v1/ports/detail", {"address": port_ident}).get("ports", [])
        if not found:
            raise click.ClickException(f"Port with address {port_ident} could not be found.")
        body = found[0]
    else:
        body = api.get(f"/v1/ports/{quote_segment(port_ident)}")
    _emit(ctx, body, lambda: _object_table(body))


@port.command("delete")
@click.argument("ports", metavar="PORT...", nargs=-1, required=True)
@client_options(output=False)
@click.pass_context
def port_delete(ctx: click.Context, ports: tuple[str, ...]) -> None:
    """Delete ports (by UUID); carries on past failures, then exits 1 if any."""
    api = _api(ctx)

    def delete(ident: str) -> None:
        api.delete(f"/v1/ports/{quote_segment(ident)}")
        _err(f"Deleted port {ident}")

    _exit_if_failed(ctx, [], len(_for_each(ports, delete)) < len(ports))


# --- driver ---------------------------------------------------------------------------------


@click.group(cls=ClientGroup)
@client_options(group=True)
def driver() -> None:
    """Inspect the drivers (hardware types) the service has loaded."""


@driver.command("list")
@client_options()
@click.pass_context
def driver_list(ctx: click.Context) -> None:
    """List the enabled drivers and the conductors that run them."""
    drivers = _api(ctx).get("/v1/drivers").get("drivers", [])
    rows = [{"name": d.get("name"), "hosts": ", ".join(d.get("hosts") or [])} for d in drivers]
    columns = [("Supported driver(s)", "name"), ("Active host(s)", "hosts")]
    _emit(ctx, drivers, lambda: _list_table(rows, columns))
