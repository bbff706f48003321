"""`ironsight webhook ...`: the deliveries of discoverd's signed webhooks (docs/fleet.md):
what reached the receivers, what is retried, what failed; and a failed one sent again."""

from __future__ import annotations

import click

from ironsight.cli.introspection import DiscoverdGroup, discoverd_api, discoverd_options
from ironsight.cli.output import emit, list_table, object_table

STATUSES = ("pending", "delivered", "failed")
DELIVERY_COLUMNS = [("ID", "id"), ("Event", "event_type"), ("Delivery", "event_id"),
                    ("URL", "url"), ("Status", "status"), ("Attempts", "attempts"),
                    ("Last code", "last_status_code"), ("Last error", "last_error"),
                    ("Next attempt", "next_attempt_at"), ("Created", "created_at")]


def register(cli: click.Group) -> None:
    cli.add_command(webhook)


@click.group(cls=DiscoverdGroup)
@discoverd_options(group=True)
def webhook() -> None:
    """discoverd's webhooks: their deliveries, and retries."""


@webhook.command("deliveries")
@click.option("--status", type=click.Choice(STATUSES), help="Only the deliveries in this "
                                                            "status.")
@click.option("--limit", type=click.IntRange(min=1, max=1000),
              help="At most this many (default 100).")
@discoverd_options()
@click.pass_context
def webhook_deliveries(ctx: click.Context, status: str | None, limit: int | None) -> None:
    """List webhook deliveries, newest first."""
    found = discoverd_api(ctx).list_webhook_deliveries(status=status, limit=limit)
    emit(ctx, found, lambda: list_table(found, DELIVERY_COLUMNS))


@webhook.command("retry")
@click.argument("delivery_id", metavar="ID", type=click.IntRange(min=1))
@discoverd_options()
@click.pass_context
def webhook_retry(ctx: click.Context, delivery_id: int) -> None:
    """Send a failed (or pending) delivery again now (admin)."""
    found = discoverd_api(ctx).retry_webhook_delivery(delivery_id)
    emit(ctx, found, lambda: object_table(found))
