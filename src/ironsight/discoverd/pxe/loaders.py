"""Which boot loader each class of client gets, and the files behind the names.

`[pxe] loader_file_paths` maps served names to files of this host (Ironic's option); the
`*_bootfile_name` options pick a name per class of client (dnsmasq.py tells the classes
apart). Resolved once at start: a name that `loader_file_paths` lacks is a configuration
error; a missing file only leaves its class unserved, because which packages exist differs
per host (ARM64's loaders are not installable on an x86 host). Each unserved class is said at
start, and again for each machine of that class that asks to boot (dhcplog.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ironsight.common.config import PxeSection
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.pxe.dnsmasq import BootPrograms

LOG = logging.getLogger(__name__)

# client class -> what it is, for operators
CLASSES = {
    "bios": "BIOS PXE (option 93 = 0)",
    "uefi_x86_64": "x86-64 UEFI PXE (option 93 = 7 or 9)",
    "uefi_http_x86_64": "x86-64 UEFI HTTP boot (vendor class HTTPClient)",
    "uefi_aarch64": "ARM64 UEFI PXE (option 93 = 11)",
    "uefi_http_aarch64": "ARM64 UEFI HTTP boot (option 93 = 19)",
    "uefi_http_ipv6": "UEFI HTTP boot over IPv6",
}
NO_ARM64_HTTP = ("ARM64 machines are served over PXE only (shim and Debian's signed GRUB "
                 "fetch over TFTP)")
NO_HTTP_IPV6 = ("over IPv6 UEFI machines are served over PXE only (HTTP-boot firmware needs "
                "its vendor class echoed in DHCPv6, which dnsmasq cannot write)")
BY_DESIGN = ("uefi_http_aarch64", "uefi_http_ipv6")  # said per machine, not at start
ARCHES = {"aarch64": "uefi_aarch64"}  # pxe_bootfile_name_by_arch keys
# where Debian's packages put the loaders: named in the "missing" messages
_PACKAGES = (("/usr/lib/ipxe/", "ipxe"), ("/usr/lib/shim/shimaa64", "shim-signed (arm64)"),
             ("/usr/lib/shim/", "shim-signed"),
             ("/usr/lib/grub/x86_64-efi-signed/", "grub-efi-amd64-signed"),
             ("/usr/lib/grub/arm64-efi-signed/", "grub-efi-arm64-signed"))
# shim loads this second stage from the server it was loaded from (by its own architecture)
_SHIM_NEXT = {"shimx64": "grubx64.efi", "shimaa64": "grubaa64.efi"}


@dataclass(frozen=True)
class BootSetup:
    files: dict[str, Path]  # served name -> an existing file of this host
    programs: BootPrograms
    unserved: dict[str, str] = field(default_factory=dict)  # client class -> why

    def log(self) -> None:
        for name, why in self.unserved.items():
            if name in BY_DESIGN:
                continue
            level = logging.INFO if name == "uefi_aarch64" else logging.WARNING
            LOG.log(level, "PXE: %s machines will not boot: %s", CLASSES[name], why)


def resolve(pxe: PxeSection) -> BootSetup:
    """The loaders and programs `pxe` configures; ConfigError names a wrong option."""
    paths = _loader_paths(pxe)
    chosen = {"bios": ("ipxe_bootfile_name", pxe.ipxe_bootfile_name),
              "uefi_x86_64": ("uefi_pxe_bootfile_name", pxe.uefi_pxe_bootfile_name),
              "uefi_http_x86_64": ("uefi_ipxe_bootfile_name", pxe.uefi_ipxe_bootfile_name),
              **_by_arch(pxe)}
    files = {name: path for name, path in paths.items() if path.is_file()}
    programs: dict[str, str | None] = {}
    unserved: dict[str, str] = {"uefi_http_aarch64": NO_ARM64_HTTP,
                                "uefi_http_ipv6": NO_HTTP_IPV6}
    for kind, (option, name) in chosen.items():
        programs[kind] = None
        if not name:
            continue
        if name not in paths:
            raise ConfigError(f"[pxe] {option}: {name!r} is not a name of [pxe] "
                              f"loader_file_paths ({', '.join(paths) or 'none'})")
        why = _missing(name, paths, files)
        if why:
            unserved[kind] = f"[pxe] {option} {name}: {why}"
        else:
            programs[kind] = name
    http = programs["uefi_http_x86_64"]
    if http and _shim_next(paths[http]):
        LOG.warning("[pxe] uefi_ipxe_bootfile_name %s is shim: HTTP-boot clients will stop "
                    "in GRUB, which cannot fetch over HTTP (use snponly.efi)", http)
    return BootSetup(files, BootPrograms(**programs), unserved)


def _loader_paths(pxe: PxeSection) -> dict[str, Path]:
    paths: dict[str, Path] = {}
    for item in pxe.loader_file_paths:
        name, _, path = item.partition(":")
        name, path = name.strip(), path.strip()
        if not name or not _plain_name(name) or not path.startswith("/"):
            raise ConfigError(f"[pxe] loader_file_paths: {item!r} is not NAME:/absolute/path "
                              "(NAME a file name without a directory)")
        paths[name] = Path(path)
    if pxe.ipxe_binary and pxe.ipxe_bootfile_name:  # the deprecated option wins
        paths[pxe.ipxe_bootfile_name] = Path(pxe.ipxe_binary)
    return paths


def _by_arch(pxe: PxeSection) -> dict[str, tuple[str, str]]:
    found = {}
    for item in pxe.pxe_bootfile_name_by_arch:
        arch, _, name = item.partition(":")
        if arch.strip() not in ARCHES or not name.strip():
            raise ConfigError(f"[pxe] pxe_bootfile_name_by_arch: {item!r} is not ARCH:NAME "
                              f"with ARCH one of {', '.join(ARCHES)}")
        found[ARCHES[arch.strip()]] = ("pxe_bootfile_name_by_arch", name.strip())
    return found


def _plain_name(name: str) -> bool:
    return PurePosixPath(name).name == name and name not in (".", "..")


def _missing(name: str, paths: dict[str, Path], files: dict[str, Path]) -> str | None:
    """Why the loader `name` cannot boot anything (None: it can)."""
    if name not in files:
        return f"{paths[name]} does not exist{_install(paths[name])}"
    after = _shim_next(paths[name])
    if after and after not in files:
        where = (f"{paths[after]} does not exist{_install(paths[after])}" if after in paths
                 else "it is not a name of [pxe] loader_file_paths")
        return f"it is shim, which loads {after} next, and {where}"
    return None


def _shim_next(path: Path) -> str | None:
    return next((after for stem, after in _SHIM_NEXT.items() if path.name.startswith(stem)),
                None)


def _install(path: Path) -> str:
    package = next((pkg for prefix, pkg in _PACKAGES if str(path).startswith(prefix)), None)
    return f" (install the {package} package)" if package else ""
