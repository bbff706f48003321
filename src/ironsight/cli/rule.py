"""`ironsight rule ...`: discoverd's inspection rules, both dialects, from the command line.

Rules live in discoverd (docs/rules.md): Ironic's dialect at `/v1/inspection_rules`, the
inspector's at `/v1/rules`; one engine applies both. These commands talk to discoverd like
`ironsight introspection` (same options, same client library) and take the files the upstream
clients take (cli/rule_files.py), sending each rule to its own dialect's API. Data on stdout (a
table, or with `-f json` the API objects, each with the `dialect` it was found in), progress
and errors on stderr; exit 1 when discoverd refuses any of the work.

`ironsight rule test RULE NODE` is the dry run: what a stored rule, or one in a file, would do
to a node's latest stored data, changing nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from ironsight.cli.introspection import DiscoverdGroup, discoverd_api, discoverd_options
from ironsight.cli.options import setting
from ironsight.cli.output import emit, err, exit_if_failed, for_each, list_table, object_table
from ironsight.cli.rule_files import (
    Dialect,
    RuleFileError,
    dialect_of,
    json_arg,
    load_rules,
)
from ironsight.discoverd.client import ClientError

DIALECTS: tuple[Dialect, ...] = ("ironic", "inspector")
LIST_COLUMNS = [("UUID", "uuid"), ("Dialect", "dialect"), ("Priority", "priority"),
                ("Phase", "phase"), ("Description", "description"), ("Built-in", "built_in"),
                ("Scope", "scope")]
CREATED_COLUMNS = [("UUID", "uuid"), ("Dialect", "dialect"), ("Priority", "priority"),
                   ("Description", "description"), ("Warnings", "warnings")]


def register(cli: click.Group) -> None:
    """Add the `rule` command group to the top-level CLI."""
    cli.add_command(rule)


@click.group(cls=DiscoverdGroup)
@discoverd_options(group=True)
def rule() -> None:
    """Inspection rules (both dialects), applied by discoverd after the processing hooks."""


def _dialects(choice: str) -> tuple[Dialect, ...]:
    return DIALECTS if choice == "all" else (choice,)  # type: ignore[return-value]


def _find(api: Any, uuid: str, dialects: Sequence[Dialect]) -> tuple[dict[str, Any], Dialect]:
    """A rule and its dialect: asked of each dialect's API in turn (a UUID is in one only)."""
    for dialect in dialects[:-1]:
        try:
            return api.get_rule(uuid, dialect), dialect
        except ClientError as exc:
            if exc.status_code != 404:
                raise
    return api.get_rule(uuid, dialects[-1]), dialects[-1]


dialect_option = click.option(
    "--dialect", type=click.Choice(["all", *DIALECTS]), default="all", show_default=True,
    help="Which API's rules: Ironic's (/v1/inspection_rules) or the inspector's (/v1/rules).")


# --- create ------------------------------------------------------------------------------------


def _rules_from_options(file: str | None, options: dict[str, Any]) -> list[dict[str, Any]]:
    given = {k: v for k, v in options.items() if v is not None}
    if file is not None:
        if given:
            raise click.UsageError(f"FILE and --{next(iter(given)).replace('_', '-')} "
                                   "cannot be combined: the file holds whole rules")
        return load_rules(file)
    if "actions" not in given:
        raise click.UsageError("give a FILE of rules, or at least --actions")
    body = dict(given)
    for key in ("actions", "conditions"):
        if key in body:
            body[key] = json_arg(body[key], f"--{key}")
    return [body]


@rule.command("create")
@click.argument("file", metavar="[FILE|-]", required=False)
@click.option("--actions", metavar="JSON|FILE|-", help="The actions (a JSON list; or a file, "
              "or - for stdin), as `baremetal inspection rule create` takes them.")
@click.option("--conditions", metavar="JSON|FILE|-", help="The conditions, likewise.")
@click.option("--description", help="What the rule is for.")
@click.option("--priority", type=int, help="Higher runs first (0-9999; default 0).")
@click.option("--phase", help="The phase it runs in (only `main`).")
@click.option("--sensitive/--not-sensitive", default=None,
              help="Hide its conditions and actions in every answer and trace.")
@click.option("--uuid", help="Its UUID (default: a new one).")
@discoverd_options()
@click.pass_context
def rule_create(ctx: click.Context, file: str | None, **options: Any) -> None:
    """Create rules: those of FILE (JSON or YAML, one rule or a list, in either dialect, as
    `baremetal inspection rule create` or `openstack baremetal introspection rule import`
    take them), or one from the options (Ironic's dialect)."""
    try:
        bodies = _rules_from_options(file, options)
    except RuleFileError as exc:
        raise click.BadParameter(str(exc), param_hint="FILE") from None
    api = discoverd_api(ctx)
    created: list[dict[str, Any]] = []

    def create(index: str) -> None:
        body = bodies[int(index)]
        dialect = dialect_of(body)
        try:
            found = {**api.create_rule(body, dialect), "dialect": dialect}
        except ClientError as exc:
            name = f"rule {index}" + (f" ({body['description']!r})"
                                      if body.get("description") else "")
            raise ClientError(f"{name}: {exc.message}", exc.status_code) from None
        created.append(found)
        for warning in found.get("warnings") or ():
            err(f"Warning: rule {found.get('uuid')}: {warning}")

    done = for_each([str(i) for i in range(len(bodies))], create, (ClientError,))
    if created:
        emit(ctx, created, lambda: list_table(created, CREATED_COLUMNS))
    exit_if_failed(ctx, [], len(done) < len(bodies))


# --- list, show, delete --------------------------------------------------------------------------


@rule.command("list")
@dialect_option
@click.option("--long", is_flag=True, help="Every field of Ironic-dialect rules.")
@discoverd_options()
@click.pass_context
def rule_list(ctx: click.Context, dialect: str, long: bool) -> None:
    """List rules, of both dialects by default."""
    api = discoverd_api(ctx)
    found = [{**r, "dialect": d} for d in _dialects(dialect)
             for r in api.list_rules(d, detail=long)]
    columns = LIST_COLUMNS + ([("Sensitive", "sensitive"), ("Conditions", "conditions"),
                               ("Actions", "actions")] if long else [])
    emit(ctx, found, lambda: list_table(found, columns))


@rule.command("show")
@click.argument("uuid", metavar="UUID")
@dialect_option
@discoverd_options()
@click.pass_context
def rule_show(ctx: click.Context, uuid: str, dialect: str) -> None:
    """Show a rule (found in either dialect)."""
    found, where = _find(discoverd_api(ctx), uuid, _dialects(dialect))
    shown = {**found, "dialect": where}
    emit(ctx, shown, lambda: object_table(shown))


@rule.command("delete")
@click.argument("uuids", metavar="[UUID...]", nargs=-1)
@click.option("--all", "everything", is_flag=True,
              help="Every rule (but the built-in ones) of the chosen dialects.")
@dialect_option
@discoverd_options(output=False)
@click.pass_context
def rule_delete(ctx: click.Context, uuids: tuple[str, ...], everything: bool,
                dialect: str) -> None:
    """Delete rules by UUID (found in either dialect), or --all."""
    if everything == bool(uuids):
        raise click.UsageError("give rule UUIDs or --all (not both)")
    api = discoverd_api(ctx)
    dialects = _dialects(dialect)
    if everything:
        for name in dialects:
            api.delete_all_rules(name)
            err(f"Deleted every {name}-dialect rule (built-in rules stay)")
        return

    def delete(uuid: str) -> None:
        _, where = _find(api, uuid, dialects)
        api.delete_rule(uuid, where)
        err(f"Deleted rule {uuid}")

    exit_if_failed(ctx, [], len(for_each(uuids, delete, (ClientError,))) < len(uuids))


# --- test: the dry run ---------------------------------------------------------------------------


def _args_text(args: Any) -> str:
    if isinstance(args, dict):
        return " ".join(f"{k}={json.dumps(v)}" for k, v in args.items())
    return json.dumps(args)


def _change_text(change: dict[str, Any]) -> str:
    text = f"{change.get('op', '?')} {change.get('path', '')}"
    return f"{text} = {json.dumps(change['value'])}" if "value" in change else text


def render_dry_run(result: dict[str, Any], echo: Callable[[str], None]) -> None:
    """The dry run, readably: which conditions held, what each action would change."""
    rule_name = result.get("rule") or "the given rule"
    verdict = "matches" if result.get("matched") else "does not match"
    echo(f"Rule {rule_name} {verdict} node {result.get('node')}.")
    conditions = result.get("conditions") or []
    echo("Conditions:" if conditions else "Conditions: none (the actions always run)")
    for cond in conditions:
        mark = {True: "yes", False: "NO", None: "-"}.get(cond.get("result"), "?")
        echo(f"  [{mark:>3}] {cond.get('op')} {_args_text(cond.get('args'))}")
    actions = result.get("actions") or []
    if result.get("matched") and actions:
        echo("Actions (what each would change):")
        for action in actions:
            echo(f"  {action.get('op')} {_args_text(action.get('args'))}")
            changes = action.get("changes") or []
            for change in changes:
                echo(f"      {_change_text(change)}")
            if not changes:
                echo("      (no change)")
    elif actions:
        echo(f"Actions: none would run ({len(actions)} skipped).")
    if result.get("failure"):
        echo(f"Failure: {result['failure']}")
    for warning in result.get("warnings") or ():
        echo(f"Warning: {warning}")


def _rule_arg(rule_ref: str) -> str | dict[str, Any]:
    """A UUID, or the one rule of a file (or `-`)."""
    if rule_ref != "-" and not Path(rule_ref).is_file():
        return rule_ref
    try:
        rules = load_rules(rule_ref)
    except RuleFileError as exc:
        raise click.BadParameter(str(exc), param_hint="RULE") from None
    if len(rules) != 1:
        raise click.BadParameter(f"{rule_ref} holds {len(rules)} rules; test one at a time",
                                 param_hint="RULE")
    return rules[0]


@rule.command("test")
@click.argument("rule_ref", metavar="RULE")
@click.argument("node", metavar="NODE")
@discoverd_options()
@click.pass_context
def rule_test(ctx: click.Context, rule_ref: str, node: str) -> None:
    """Dry run: what RULE (a stored rule's UUID, or a file holding one rule in either
    dialect, or - for stdin) would do to NODE (UUID or name) with its latest stored
    introspection data. Nothing is changed."""
    result = discoverd_api(ctx).dry_run(_rule_arg(rule_ref), node)
    if setting(ctx, "format", "table") == "json":
        click.echo(json.dumps(result, indent=2))
    else:
        render_dry_run(result, click.echo)
