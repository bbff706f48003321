"""`ironsight port ...`: a node's network interfaces (by MAC address), as `baremetal port`.

Ports are what discoverd matches a booting ramdisk to its node by, so operators create them
at enrolment and inspection adds the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from ironsight.cli.options import KEY_VALUE, ClientGroup, baremetal_api, client_options
from ironsight.cli.output import JsonObject, delete_each, emit, list_table, object_table
from ironsight.client.http import is_uuid, node_path, quote_segment

PORT_COLUMNS = [("UUID", "uuid"), ("Address", "address")]
PORT_LONG_COLUMNS = [
    ("UUID", "uuid"), ("Address", "address"), ("Node UUID", "node_uuid"),
    ("PXE Enabled", "pxe_enabled"), ("Local Link Connection", "local_link_connection"),
    ("Extra", "extra"), ("Created At", "created_at"),
]


def register(cli: click.Group) -> None:
    """Add the `port` command group to the top-level CLI."""
    cli.add_command(port)


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
    api = baremetal_api(ctx)
    node_uuid = node_ident if is_uuid(node_ident) else api.get(node_path(node_ident))["uuid"]
    body: JsonObject = {"address": address, "node_uuid": node_uuid}
    if pxe_enabled is not None:
        body["pxe_enabled"] = pxe_enabled
    if extra:
        body["extra"] = dict(extra)
    if local_link_connection:
        body["local_link_connection"] = dict(local_link_connection)
    created = api.post("/v1/ports", body)
    emit(ctx, created, lambda: object_table(created))


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
    ports = list(baremetal_api(ctx).iter_collection(path, "ports", params))
    columns = PORT_LONG_COLUMNS if long_ else PORT_COLUMNS
    emit(ctx, ports, lambda: list_table(ports, columns))


@port.command("show")
@click.argument("port_ident", metavar="PORT")
@click.option("--address", "by_address", is_flag=True, help="PORT is a MAC address.")
@client_options()
@click.pass_context
def port_show(ctx: click.Context, port_ident: str, by_address: bool) -> None:
    """Show a port, by UUID or (with --address) by MAC address."""
    api = baremetal_api(ctx)
    if by_address:
        found = api.get("/v1/ports/detail", {"address": port_ident}).get("ports", [])
        if not found:
            raise click.ClickException(f"Port with address {port_ident} could not be found.")
        body = found[0]
    else:
        body = api.get(f"/v1/ports/{quote_segment(port_ident)}")
    emit(ctx, body, lambda: object_table(body))


@port.command("delete")
@click.argument("ports", metavar="PORT...", nargs=-1, required=True)
@client_options(output=False)
@click.pass_context
def port_delete(ctx: click.Context, ports: tuple[str, ...]) -> None:
    """Delete ports (by UUID); carries on past failures, then exits 1 if any."""
    delete_each(ctx, ports, lambda ident: f"/v1/ports/{quote_segment(ident)}", "port")
