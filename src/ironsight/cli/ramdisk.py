"""`ironsight ramdisk build`: the discovery ramdisk (kernel + initramfs) for PXE boots.

Progress goes to stderr, the summary to stdout. Exit 1 when a step fails (apt, a missing
system package), with the failing command's message.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ironsight.ramdisk.build import Result


@click.group("ramdisk")
def ramdisk_group() -> None:
    """The discovery ramdisk (Debian cloud kernel + busybox + Python agent)."""


@ramdisk_group.command("build")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Output directory (default: <state dir>/ramdisk).")
@click.option("--force", is_flag=True,
              help="Rebuild even when the manifest shows unchanged inputs.")
def build_command(out_dir: Path | None, force: bool) -> None:
    """Write OUT/vmlinuz, OUT/initramfs and OUT/manifest.json, unless they are up to date."""
    from ironsight.common.config import default_ramdisk_dir
    from ironsight.ramdisk import RamdiskError, build

    out = out_dir or default_ramdisk_dir()
    try:
        result = build.build(out, force=force, log=lambda line: click.echo(line, err=True))
    except RamdiskError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(summary(result))


def summary(result: Result) -> str:
    """What was built (or found up to date), sizes, versions and timings."""
    manifest, files = result.manifest, result.manifest.get("files", {})
    kernel = manifest.get("kernel", {})
    state = "built" if result.rebuilt else "up to date (inputs unchanged)"
    lines = [
        f"ramdisk {state}: {result.out_dir}",
        f"  vmlinuz    {_mb(files.get('vmlinuz', {}).get('size'))}  "
        f"{kernel.get('package')} {kernel.get('version')}",
        f"  initramfs  {_mb(files.get('initramfs', {}).get('size'))}  "
        f"python {manifest.get('python')}, busybox {manifest.get('busybox')}, "
        f"modules: {' '.join(kernel.get('modules', []))}",
        "  timings    " + ", ".join(f"{name} {seconds:.1f} s"
                                    for name, seconds in result.timings.items()),
    ]
    return "\n".join(lines)


def _mb(size: object) -> str:
    return f"{size / 1e6:6.2f} MB" if isinstance(size, int) else "     ? MB"


def register(cli: click.Group) -> None:
    cli.add_command(ramdisk_group)
