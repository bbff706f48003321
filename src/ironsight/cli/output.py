"""What the client commands print, and how they exit.

Data goes to stdout (a table, or with `-f json` exactly the API objects); progress lines and
errors go to stderr, so `-f json` output can always be piped. A command that acts on several
items carries on past a failed one, then exits 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ironsight.cli.options import baremetal_api, setting
from ironsight.client.http import ClientError

JsonObject = dict[str, Any]

PIPE_WIDTH = 200  # tables written to a pipe are not squeezed to 80 columns


def err(message: str) -> None:
    click.echo(message, err=True)


def print_table(table: Table) -> None:
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


def cell(value: Any) -> Text:
    """Plain text (never rich markup: names may contain `[`); containers as JSON."""
    if isinstance(value, dict | list):
        return Text(json.dumps(value, sort_keys=True))
    return Text(str(value))


def list_table(rows: Iterable[JsonObject], columns: Sequence[tuple[str, str]]) -> Table:
    table = Table()
    for header, key in columns:
        is_uuid = key == "uuid" or key.endswith("_uuid")
        min_width = 36 if is_uuid else max(len(word) for word in header.split())
        table.add_column(header, overflow="fold", no_wrap=is_uuid, min_width=min_width)
    for row in rows:
        table.add_row(*(cell(row.get(key)) for _, key in columns))
    return table


def object_table(obj: JsonObject) -> Table:
    table = Table()
    table.add_column("Field", no_wrap=True)
    table.add_column("Value", overflow="fold", min_width=36)
    for key in sorted(obj):
        if key != "links":
            table.add_row(key, cell(obj[key]))
    return table


def emit(ctx: click.Context, data: Any, table: Callable[[], Table]) -> None:
    """`data` as JSON with `-f json`, else the table (built only then)."""
    if setting(ctx, "format", "table") == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        print_table(table())


def for_each(items: Sequence[str], action: Callable[[str], None],
             errors: tuple[type[Exception], ...] = (ClientError,)) -> list[str]:
    """Run `action` on every item, reporting failures without stopping; the ones that worked."""
    done: list[str] = []
    for item in items:
        try:
            action(item)
        except errors as exc:
            err(f"Error: {exc}")
        else:
            done.append(item)
    return done


def exit_if_failed(ctx: click.Context, failures: Sequence[str], had_errors: bool) -> None:
    for message in failures:
        err(f"Error: {message}")
    if failures or had_errors:
        ctx.exit(1)


def delete_each(ctx: click.Context, idents: Sequence[str], path: Callable[[str], str],
                noun: str) -> None:
    """DELETE every item, saying so on stderr; carries on past failures, then exits 1 if any."""
    api = baremetal_api(ctx)

    def delete(ident: str) -> None:
        api.delete(path(ident))
        err(f"Deleted {noun} {ident}")

    exit_if_failed(ctx, [], len(for_each(idents, delete)) < len(idents))
