"""`ironsight inspection ...`: what the fleet's inspections say as a whole, from discoverd
(a node's own timeline is `ironsight node timeline NODE`)."""

from __future__ import annotations

import click
from rich.table import Table

from ironsight.cli.introspection import DiscoverdGroup, discoverd_api, discoverd_options
from ironsight.cli.output import emit, list_table
from ironsight.discoverd.diagnosis import REASONS

REJECTED_COLUMNS = [("At", "at"), ("Kind", "kind"), ("Reason", "reason"), ("Node", "uuid"),
                    ("MACs", "macs"), ("BMC", "bmc_address"), ("From", "source_address"),
                    ("Message", "message")]


def register(cli: click.Group) -> None:
    cli.add_command(inspection)


@click.group(cls=DiscoverdGroup)
@discoverd_options(group=True)
def inspection() -> None:
    """The fleet's inspections: the board, refused callbacks, step deadlines."""


@inspection.command("rejected")
@click.option("--limit", type=click.IntRange(1, 1000), default=100, show_default=True,
              help="How many, newest first.")
@click.option("--reason", type=click.Choice(REASONS), help="Only refusals for this reason.")
@click.option("--mac", metavar="MAC", help="Only callbacks that named this MAC.")
@discoverd_options()
@click.pass_context
def inspection_rejected(ctx: click.Context, limit: int, reason: str | None,
                        mac: str | None) -> None:
    """Ramdisk reports and hellos refused before they changed anything: no introspection
    (or several) matched their MACs, the introspection took none, or the callback token was
    wrong or missing."""
    found = discoverd_api(ctx).get_rejected(limit=limit, reason=reason, mac=mac)
    rows = [{**r, "macs": ", ".join(r.get("macs") or [])} for r in found]
    emit(ctx, found, lambda: list_table(rows, REJECTED_COLUMNS))


DEADLINE_COLUMNS = [("Step", "step"), ("Model", "model"), ("Deadline (s)", "seconds"),
                    ("p95 (s)", "p95"), ("Samples", "samples")]


@inspection.command("deadlines")
@discoverd_options()
@click.pass_context
def inspection_deadlines(ctx: click.Context) -> None:
    """The step deadlines discoverd holds waiting attempts to, learned from this fleet's
    recent successful attempts (model "*": all models')."""
    found = discoverd_api(ctx).get_deadlines()

    def table() -> Table:
        shown = list_table(found.get("deadlines") or [], DEADLINE_COLUMNS)
        shown.caption = (
            f"{'enabled' if found.get('enabled') else 'disabled'}: {found.get('factor')} x "
            f"p95, within {found.get('min_seconds')}-{found.get('max_seconds')} s, learned "
            f"from the last {found.get('samples')} successful attempts (at least "
            f"{found.get('min_samples')} per step)"
            + ("" if found.get("deadlines") else
               "; none learned yet: too few successful attempts with timelines"))
        return shown

    emit(ctx, found, table)


BOARD_COLUMNS = [("Node", "uuid"), ("State", "state"), ("Waits for", "step"),
                 ("Quiet (s)", "quiet_seconds"), ("Deadline (s)", "deadline_seconds"),
                 ("Overdue", "overdue")]


@inspection.command("board")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="How many attempts to list, the quiet the longest first.")
@discoverd_options()
@click.pass_context
def inspection_board(ctx: click.Context, limit: int) -> None:
    """The running inspections: how many wait at each step, and the ones that have shown
    no step for the longest first, with the deadline each is held to."""
    found = discoverd_api(ctx).get_board(limit=limit)

    def table() -> Table:
        shown = list_table(found.get("attempts") or [], BOARD_COLUMNS)
        steps = ", ".join(f"{s['step']} {s['count']}"
                          + (f" ({s['overdue']} overdue)" if s.get("overdue") else "")
                          for s in found.get("steps") or [])
        shown.caption = f"{found.get('running', 0)} running" + (f": {steps}" if steps else "")
        return shown

    emit(ctx, found, table)
