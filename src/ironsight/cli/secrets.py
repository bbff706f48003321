"""`ironsight secrets`: the key file that encrypts driver_info secrets at rest, and the
commands that encrypt existing values and rotate the key (see docs/security.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from ironsight.cli.server import _load, config_file_option
from ironsight.common import config as configmod
from ironsight.common.exceptions import ConfigError, IronsightError


def _key_file(conf: configmod.Config) -> Path:
    if not conf.DEFAULT.secrets_key_file:
        raise click.ClickException("[DEFAULT] secrets_key_file is not set in the configuration")
    return Path(conf.DEFAULT.secrets_key_file).expanduser()


def _reseal(conf: configmod.Config) -> tuple[int, int, list[str]]:
    """Encrypt every node's secret fields with the key file's newest key: (rewritten, seen,
    UUIDs still locked)."""
    from ironsight.baremetal.conductor.rekey import reseal_all
    from ironsight.baremetal.drivers.loader import load_drivers
    from ironsight.baremetal.secrets import DriverSecrets
    from ironsight.common.db import Database

    secrets = DriverSecrets.from_config(conf, load_drivers(conf).every_secret_key())

    async def run() -> tuple[int, int, list[str]]:
        db = Database(conf.database_url, pool_size=2,
                      busy_timeout_ms=conf.database.sqlite_busy_timeout)
        try:
            done = await reseal_all(db, secrets)
        finally:
            await db.close()
        return done.rewritten, done.seen, done.locked

    return asyncio.run(run())


def _checked_reseal(conf: configmod.Config) -> int:
    try:
        rewritten, seen, locked = _reseal(conf)
    except IronsightError as exc:
        raise click.ClickException(str(exc)) from None
    if locked:
        raise click.ClickException(
            f"{len(locked)} node(s) stayed locked and were not rewritten ({', '.join(locked[:5])}"
            f"{'...' if len(locked) > 5 else ''}); run the command again")
    click.echo(f"{rewritten} of {seen} nodes rewritten")
    return rewritten


def register(cli: click.Group) -> None:
    @cli.group("secrets")
    def secrets_group() -> None:
        """Encryption of driver_info secrets at rest."""

    @secrets_group.command("create-key")
    @click.option("--key-file", required=True, type=click.Path(dir_okay=False),
                  help="The key file to create (0600; an existing file is never replaced).")
    def create_key(key_file: str) -> None:
        """Create a new key file holding one fresh key."""
        from ironsight.common.keyfile import create_key_file

        try:
            create_key_file(Path(key_file))
        except (ConfigError, OSError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise click.ClickException(f"cannot create {key_file}: {why}") from None
        click.echo(f"key file {key_file} created; set [DEFAULT] secrets_key_file = {key_file}")

    @secrets_group.command("encrypt")
    @config_file_option
    def encrypt(config_file: str | None) -> None:
        """Encrypt the secret fields still stored in plain text (nodes enrolled before the
        key file was configured). Safe while the services run, and to run again."""
        conf = _load(config_file)
        _key_file(conf)
        _checked_reseal(conf)

    @secrets_group.command("rotate-key")
    @config_file_option
    def rotate_key(config_file: str | None) -> None:
        """Add a new key in front of the key file, encrypt every node's secret fields with
        it, then drop the old keys. Safe while the services run (they read the key file
        again when it changes) and to run again after a failure: old keys are dropped only
        once every value is encrypted with the new one."""
        from ironsight.common.keyfile import new_key, read_keys, write_keys

        conf = _load(config_file)
        path = _key_file(conf)
        try:
            keys = read_keys(path)
            write_keys(path, [new_key(), *keys])
        except (ConfigError, OSError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise click.ClickException(f"cannot rotate {path}: {why}") from None
        click.echo(f"new key added to {path}")
        # Until a pass finds nothing to do: a service that encrypted a value with the old
        # key while the first pass ran (before it saw the new file) is caught by the next.
        while _checked_reseal(conf):
            pass
        write_keys(path, read_keys(path)[:1])
        click.echo(f"old keys removed from {path}")
