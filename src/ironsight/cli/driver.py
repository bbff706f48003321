"""`ironsight driver list`: which hardware types the service has loaded, and where.

Enrolling a node with a driver no conductor runs fails, so this is where an operator looks
first (as `baremetal driver list`).
"""

from __future__ import annotations

import click

from ironsight.cli.options import ClientGroup, baremetal_api, client_options
from ironsight.cli.output import emit, list_table


def register(cli: click.Group) -> None:
    """Add the `driver` command group to the top-level CLI."""
    cli.add_command(driver)


@click.group(cls=ClientGroup)
@client_options(group=True)
def driver() -> None:
    """Inspect the drivers (hardware types) the service has loaded."""


@driver.command("list")
@client_options()
@click.pass_context
def driver_list(ctx: click.Context) -> None:
    """List the enabled drivers and the conductors that run them."""
    drivers = baremetal_api(ctx).get("/v1/drivers").get("drivers", [])
    rows = [{"name": d.get("name"), "hosts": ", ".join(d.get("hosts") or [])} for d in drivers]
    columns = [("Supported driver(s)", "name"), ("Active host(s)", "hosts")]
    emit(ctx, drivers, lambda: list_table(rows, columns))
