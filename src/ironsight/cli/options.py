"""What every client command group shares: its options, its error handling, its runtime.

The options (`--url`, `--timeout`, `-f`) may be given on the group or on the command, so
they are remembered in the context tree rather than passed as arguments. The `Runtime` is
what tests replace: the HTTP transport and the clock `--wait` polls with.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
import httpx
from click.core import ParameterSource

from ironsight.cli import auth
from ironsight.client import http
from ironsight.client.http import ApiClient, ClientError
from ironsight.client.wait import Poller
from ironsight.common.auth.credentials import Credentials

F = TypeVar("F", bound=Callable[..., Any])

_META = "ironsight.client."


@dataclass
class Runtime:
    """What tests replace: the HTTP transport and the clock that `--wait` polls with.

    Give one as click's `obj` (`CliRunner().invoke(cli, args, obj=Runtime(...))`).
    """

    transport: httpx.BaseTransport | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    poll_interval: float = 2.0

    @property
    def poller(self) -> Poller:
        return Poller(interval=self.poll_interval, clock=self.clock, sleep=self.sleep)


class ClientGroup(click.Group):
    """Turns a failure of the remote service into `Error: ...` on stderr and exit code 1."""

    errors: tuple[type[Exception], ...] = (ClientError,)  # what counts as a service failure

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except self.errors as exc:
            raise click.ClickException(str(exc)) from exc


def runtime(ctx: click.Context) -> Runtime:
    return ctx.find_object(Runtime) or Runtime()


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Store a setting in the context tree's shared `meta`, the innermost given value winning.

    Groups parse first and always supply a value (default or environment); a command's option
    defaults to None so that `ironsight node --url X list` and `... list --url X` both work.
    """
    if (value is not None and param.name
            and ctx.get_parameter_source(param.name) is not ParameterSource.DEFAULT):
        ctx.meta[_META + param.name] = value
    return value


def setting(ctx: click.Context, name: str, default: Any) -> Any:
    """A `--url`/`--timeout`/`--format`/`--os-*` value, from the command or else its group
    (given, or from the environment); `default` when neither has one."""
    return ctx.meta.get(_META + name, default)


def cloud(ctx: click.Context) -> auth.Cloud | None:
    name = setting(ctx, "os_cloud", None)
    return auth.load_cloud(name) if name else None


def url(ctx: click.Context, default: str, from_cloud: str | None, name: str = "url") -> str:
    """`--url` (or the option `name`) or its variable, else the cloud's endpoint for this
    service, else `default`."""
    return str(setting(ctx, name, None) or from_cloud or default)


def credentials(ctx: click.Context, chosen: auth.Cloud | None) -> Credentials:
    return auth.credentials(setting(ctx, "os_username", None),
                            setting(ctx, "os_password", None),
                            setting(ctx, "os_cacert", None), chosen)


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
        for name, var, what in (
                ("--os-cloud", "OS_CLOUD", "Cloud of a clouds.yaml giving credentials and "
                 "endpoints."),
                ("--os-username", "OS_USERNAME", "User (HTTP Basic authentication)."),
                ("--os-password", "OS_PASSWORD", "Password (better in OS_PASSWORD: a "
                 "command line is visible to other users; asked for when missing)."),
                ("--os-cacert", "OS_CACERT", "CA certificates (PEM) to check the API's "
                 "HTTPS certificate against.")):
            options.append(click.option(
                name, metavar=var, expose_value=False, callback=_remember,
                envvar=var if group else None, show_envvar=group, default=None, help=what))
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
    """`key=value`, the value JSON-decoded when it can be (`cpus=4` gives 4). `key=@FILE`
    takes FILE's text as the value, so that a secret (a private key, a password) needs not
    be on the command line, where other users of the host can read it; `key=@@text` is
    the literal `@text`."""

    name = "key=value"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, Any]:
        if isinstance(value, tuple):
            return value
        key, sep, raw = str(value).partition("=")
        if not sep or not key:
            self.fail(f"expected KEY=VALUE, got {value!r}", param, ctx)
        if raw.startswith("@@"):
            return key, raw[1:]
        if raw.startswith("@"):
            try:
                return key, Path(raw[1:]).expanduser().read_text()
            except (OSError, UnicodeDecodeError) as exc:
                self.fail(f"{key}: cannot read {raw[1:]!r}: "
                          f"{getattr(exc, 'strerror', None) or exc}", param, ctx)
        try:
            return key, json.loads(raw)
        except ValueError:
            return key, raw


KEY_VALUE = KeyValue()


def baremetal_api(ctx: click.Context) -> ApiClient:
    """A bare-metal API client for this invocation, closed when the command ends."""
    chosen = cloud(ctx)
    client = http.baremetal_client(
        url(ctx, http.DEFAULT_BAREMETAL_URL, chosen.baremetal_url if chosen else None),
        timeout=setting(ctx, "timeout", http.DEFAULT_TIMEOUT),
        transport=runtime(ctx).transport,
        credentials=credentials(ctx, chosen),
    )
    return ctx.with_resource(client)
