"""The `dnsmasq` filter driver: one file per MAC in dnsmasq's `dhcp-hostsdir`.

dnsmasq reads a file of that directory again when it is written (inotify), but a deleted file
keeps its entry until SIGHUP. So a MAC's file is never deleted while dnsmasq runs: its content
is rewritten in place, `<mac>` (allowed) or `<mac>,ignore` (denied). With deny_unknown_macs,
dnsmasq ignores every host without an entry (`dhcp-ignore=tag:!known`) and `<mac>` is what
lets one in. The directory is emptied at start, before dnsmasq reads it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from ironsight.common.config import Config
from ironsight.discoverd.pxe.filter import (
    FilterDriver,
    FilterPlace,
    PxeFilterError,
    denies_unknown,
)


class HostsDirDriver(FilterDriver):
    name = "dnsmasq"

    def __init__(self, directory: Path, deny_unknown: bool) -> None:
        super().__init__(deny_unknown)
        self.directory = directory
        self.writes = 0  # files written since start (observability, tests)

    @classmethod
    def from_config(cls, conf: Config, place: FilterPlace) -> FilterDriver:
        return cls(place.directory / "hosts", denies_unknown(conf))

    def dnsmasq_options(self) -> list[str]:
        options = [f"dhcp-hostsdir={self.directory}"]
        if self.deny_unknown:
            options.append("dhcp-ignore=tag:!known")
        return options

    async def start(self) -> None:
        await asyncio.to_thread(self._purge)
        self.entries = {}
        self.writes = 0

    async def stop(self) -> None:
        pass  # dnsmasq is gone; the next start empties the directory

    async def apply(self, changes: Mapping[str, bool]) -> None:
        await asyncio.to_thread(self._write_all, dict(changes))

    def _purge(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for entry in self.directory.iterdir():
            if entry.is_file() or entry.is_symlink():
                entry.unlink()

    def _write_all(self, changes: dict[str, bool]) -> None:
        for mac, allowed in changes.items():
            content = f"{mac}\n" if allowed else f"{mac},ignore\n"
            try:
                # In place, one write: dnsmasq reads the file when it is closed.
                with open(self.directory / mac, "w", encoding="ascii") as fh:
                    fh.write(content)
            except OSError as exc:
                raise PxeFilterError(f"Cannot write the dnsmasq hosts file of {mac}: "
                                     f"{exc}") from None
            self.entries[mac] = allowed
            self.writes += 1
