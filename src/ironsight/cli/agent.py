"""`ironsight agent ...`: run the discovery agent from the installed package.

The agent keeps its own argparse interface (it runs alone in the ramdisk, without
click); this command only forwards its arguments, `--help` included.
"""

from __future__ import annotations

import click


@click.command(
    "agent", add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def agent_command(args: tuple[str, ...]) -> None:
    """Collect this machine's inventory and post it (see `ironsight agent --help`)."""
    from ironsight.agent.cli import main

    raise SystemExit(main(list(args), prog="ironsight agent"))


def register(cli: click.Group) -> None:
    cli.add_command(agent_command)
