"""The `ironsight` command: services, database, configuration and client commands."""

from __future__ import annotations

import click

from ironsight import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ironsight")
def cli() -> None:
    """ironsight: in-band hardware inspection for bare-metal fleets."""


def _register() -> None:
    from ironsight.cli import (
        agent,
        discovery,
        driver,
        fleet,
        inspection,
        introspection,
        lab,
        node,
        port,
        ramdisk,
        rule,
        secrets,
        server,
        webhooks,
    )

    server.register(cli)
    node.register(cli)
    port.register(cli)
    driver.register(cli)
    introspection.register(cli)
    inspection.register(cli)
    discovery.register(cli)
    fleet.register(cli)
    webhooks.register(cli)
    rule.register(cli)
    agent.register(cli)
    ramdisk.register(cli)
    lab.register(cli)
    secrets.register(cli)


def main() -> None:
    _register()
    cli()
