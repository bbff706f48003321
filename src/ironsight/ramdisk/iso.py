"""A bootable CD image of the discovery ramdisk, for nodes booted by Redfish virtual media.

One image serves every node of a ramdisk version: `build_iso` writes `inspection.iso` once
and rebuilds it only when its inputs change. What differs per node (the callback URL and a
per-boot secret token) is never written into a shared file: the ISO holds a fixed-size GRUB
script, `PARAMS_FILE`, whose bytes are a placeholder, and the server that streams the image
to a BMC swaps in the node's block of the same size (`patched_range`). ISO 9660 stores file
data contiguous, uncompressed and unchecksummed (no zisofs, no MD5 are asked of xorriso), so
swapping those bytes is all it takes. GRUB, not the kernel, reads the parameters: the
kernel needs no CD driver.

Boot chains, both from the same files on the CD:
- BIOS: El Torito entry `boot/grub/bios.img`, a GRUB i386-pc image whose prefix is the CD's
  /boot/grub; it reads grub.cfg there.
- UEFI (with or without Secure Boot): El Torito entry `efiboot.img`, a FAT image holding
  Microsoft-signed shim as /EFI/BOOT/BOOTX64.EFI, next to Debian-signed CD GRUB
  (gcdx64.efi) as grubx64.efi, which shim loads from its own directory. That GRUB finds the
  CD by `search --file /.disk/info` and sources /boot/grub/grub.cfg; shim then verifies the
  kernel, which is Debian-signed.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import mmap
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ironsight.ramdisk import RamdiskError, run

PARAMS_FILE = "boot/grub/ironsight-params.cfg"
PARAMS_SIZE = 4096
ISO_NAME = "inspection.iso"
MANIFEST = "iso.json"
VOLUME_ID = "IRONSIGHT_INSPECT"
FORMAT = 1
CHUNK = 256 * 1024
SECTOR = 2048  # ISO 9660's logical block: every file's data starts on one

SHIM = Path("/usr/lib/shim/shimx64.efi.signed")  # signed by Microsoft's UEFI CA
MOK_MANAGER = Path("/usr/lib/shim/mmx64.efi.signed")  # what shim runs when asked to
GRUB_EFI = Path("/usr/lib/grub/x86_64-efi-signed/gcdx64.efi.signed")  # Debian-signed, for CDs
GRUB_PC = Path("/usr/lib/grub/i386-pc")
# Built into the BIOS image: GRUB on a CD has no other place to load modules from.
GRUB_PC_MODULES = ("biosdisk", "iso9660", "normal", "configfile", "search", "search_fs_file",
                   "linux", "echo", "test", "boot", "serial", "terminal")

# What each needed program or file comes from (Debian 12).
PACKAGES = {"xorriso": "xorriso", "mformat": "mtools", "mmd": "mtools", "mcopy": "mtools",
            "grub-mkimage": "grub-pc-bin", str(GRUB_PC): "grub-pc-bin",
            str(SHIM): "shim-signed", str(MOK_MANAGER): "shim-signed",
            str(GRUB_EFI): "grub-efi-amd64-signed"}

GRUB_CFG = f"""\
# ironsight: the discovery ramdisk from virtual media. The kernel's parameters are in
# {PARAMS_FILE.rsplit("/", 1)[1]}, a block the server streaming this image fills in per node.
set timeout=0
if [ "$grub_platform" = pc ]; then
  serial --unit=0 --speed=115200
  terminal_output --append serial
fi
echo 'ironsight: booting the discovery ramdisk from virtual media'
source /{PARAMS_FILE}
linux /vmlinuz $ironsight_params
initrd /initramfs
boot
"""

_HEAD = b"set ironsight_params='"
_TAIL = b"'\n#"  # the variable's line, then a comment GRUB ignores: the padding
# 4070; what the block holds. Linux on x86 itself takes 2047 bytes of command line at most,
# GRUB's leading "BOOT_IMAGE=/vmlinuz " included: far more than a URL and a token need.
MAX_ARGS = PARAMS_SIZE - len(_HEAD) - len(_TAIL) - 1
_MARKER = b" ironsight-params-placeholder "

Log = Callable[[str], None]


# --- the per-node block ---------------------------------------------------------------------------

def params_block(args: str) -> bytes:
    """The GRUB script that sets the node's kernel parameters, exactly PARAMS_SIZE bytes.

    GRUB keeps a single-quoted string verbatim, so only what could end it or what GRUB would
    re-quote for the kernel is refused. Error messages never repeat `args`: they hold a token.
    """
    _check_args(args)
    head = _HEAD + args.encode("ascii") + _TAIL
    return head + b" " * (PARAMS_SIZE - len(head) - 1) + b"\n"


def _check_args(args: str) -> None:
    for bad, what in (("'", "a single quote"), ('"', "a double quote"),
                      ("\\", "a backslash")):
        if bad in args:
            raise ValueError(f"kernel arguments contain {what}, which the GRUB parameter "
                             "block cannot carry")
    for char in args:
        if char in "\n\r":
            raise ValueError("kernel arguments contain a line break")
        if char == "\0":
            raise ValueError("kernel arguments contain a NUL character")
        if not " " <= char <= "~":
            raise ValueError("kernel arguments contain a non-ASCII or control character")
    if len(args) > MAX_ARGS:
        raise ValueError(f"kernel arguments are {len(args)} characters long; the GRUB "
                         f"parameter block holds at most {MAX_ARGS}")


def placeholder(marker: bytes) -> bytes:
    """The block as built into the ISO: no parameters, and `marker` in its comment line so
    that the built image can be searched for where the file's data landed."""
    block = bytearray(params_block(""))
    start = len(_HEAD) + len(_TAIL)
    tag = _MARKER + marker
    block[start:start + len(tag)] = tag
    return bytes(block)


# --- the built image ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BootIso:
    """The shared image and where in it each node's parameter block goes."""

    path: Path
    params_offset: int
    params_size: int
    ramdisk_hash: str

    @classmethod
    def load(cls, out_dir: Path) -> BootIso:
        """The image `build_iso` last wrote into `out_dir` (for a server: no rebuild)."""
        manifest = read_manifest(out_dir)
        if manifest is None:
            raise RamdiskError(f"no boot ISO in {out_dir}: {MANIFEST} is missing or unreadable")
        return cls.from_manifest(out_dir, manifest)

    @classmethod
    def from_manifest(cls, out_dir: Path, manifest: dict[str, Any]) -> BootIso:
        params = manifest["params"]
        return cls(out_dir / manifest["iso"]["name"], int(params["offset"]),
                   int(params["size"]), str(manifest["inputs"]["ramdisk_hash"]))


def read_manifest(out_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def patched_range(iso: BootIso, block: bytes, start: int, end: int) -> Iterator[bytes]:
    """The image's bytes [start, end) with the node's `block` in place of the placeholder,
    in chunks: what an HTTP handler streams for a (Range) request.

    Checks that the file still holds the placeholder where `iso` says, so that a stale
    BootIso (the image rebuilt since) fails instead of corrupting a node's boot.
    """
    if len(block) != iso.params_size:
        raise ValueError(f"parameter block is {len(block)} bytes, not {iso.params_size}")
    if not 0 <= start <= end:
        raise ValueError(f"bad byte range [{start}, {end})")
    low, high = iso.params_offset, iso.params_offset + iso.params_size
    with iso.path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        if end > size:
            raise ValueError(f"byte range [{start}, {end}) ends past the image ({size} bytes)")
        if not os.pread(f.fileno(), len(_HEAD) + len(_TAIL) + len(_MARKER), low).endswith(
                _MARKER):
            raise RamdiskError(f"{iso.path} holds no parameter placeholder at offset {low}: "
                               "rebuilt since it was loaded?")
        f.seek(start)
        pos = start
        while pos < end:
            chunk = f.read(min(CHUNK, end - pos))
            if not chunk:
                raise RamdiskError(f"{iso.path} ended at {pos} while read")
            if pos < high and pos + len(chunk) > low:
                patched = bytearray(chunk)
                a, b = max(low, pos), min(high, pos + len(chunk))
                patched[a - pos:b - pos] = block[a - low:b - low]
                chunk = bytes(patched)
            yield chunk
            pos += len(chunk)


# --- building it ----------------------------------------------------------------------------------

def build_iso(ramdisk_dir: Path, out_dir: Path, *, verify: bool = False, force: bool = False,
              log: Log = print) -> BootIso:
    """`out_dir/inspection.iso` for the ramdisk built in `ramdisk_dir`, unless `iso.json`
    shows one built from the same inputs. The cheap check compares the recorded inputs and
    the image's size; `verify` also hashes the image (a few tens of MB)."""
    started = time.monotonic()
    ramdisk_dir, out_dir = ramdisk_dir.resolve(), out_dir.resolve()
    loader_hashes = boot_files()
    if not ramdisk_dir.is_dir():
        raise RamdiskError(f"the ramdisk is not built: no directory {ramdisk_dir} "
                           "(run `ironsight ramdisk build` first)")
    out_dir.mkdir(parents=True, exist_ok=True)
    # the ramdisk's own lock too (build.py's), so that it is not rebuilt under xorriso
    with _locked(out_dir / ".iso.lock"), _locked(ramdisk_dir / ".lock"):
        ramdisk = _ramdisk_manifest(ramdisk_dir)
        inputs = {"format": FORMAT, "ramdisk_hash": ramdisk["input_hash"],
                  "ramdisk_files": ramdisk["files"], "boot_files": loader_hashes}
        current = None if force else is_current(out_dir, inputs, verify=verify)
        if current is not None:
            return current
        log(f"iso: building {out_dir / ISO_NAME} for ramdisk {ramdisk['input_hash'][:12]}")
        (out_dir / MANIFEST).unlink(missing_ok=True)  # a half-replaced image is never current
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".iso-") as tmp:
            offset = _make_iso(ramdisk_dir, Path(tmp), out_dir / ISO_NAME)
        iso = out_dir / ISO_NAME
        size = iso.stat().st_size
        seconds = time.monotonic() - started
        manifest: dict[str, Any] = {
            "format": FORMAT, "inputs": inputs,
            "built_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "build_seconds": round(seconds, 2), "volume_id": VOLUME_ID,
            "iso": {"name": ISO_NAME, "size": size, "sha256": _sha256(iso)},
            "params": {"file": PARAMS_FILE, "offset": offset, "size": PARAMS_SIZE},
        }
        _replace(out_dir / MANIFEST,
                 lambda t: t.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n"))
        log(f"iso: {size} bytes in {seconds:.1f} s, parameters at {offset}")
        return BootIso.from_manifest(out_dir, manifest)


def boot_files() -> dict[str, str]:
    """sha256 of what the image's boot chain is made of (this module included); a
    RamdiskError naming the package to install when a program or a file is missing."""
    missing = sorted({package for need, package in PACKAGES.items()
                      if not (Path(need).exists() if need.startswith("/")
                              else shutil.which(need))})
    if missing:
        raise RamdiskError(f"the boot ISO needs {', '.join(missing)} "
                           f"(apt-get install {' '.join(missing)})")
    files = [Path(__file__), SHIM, MOK_MANAGER, GRUB_EFI, GRUB_PC / "kernel.img",
             GRUB_PC / "cdboot.img", GRUB_PC / "moddep.lst",
             *(GRUB_PC / f"{name}.mod" for name in GRUB_PC_MODULES)]
    hashes = {}
    for path in files:
        if not path.is_file():  # only GRUB's i386-pc files are not checked above
            raise RamdiskError(f"{path} is missing (apt-get install grub-pc-bin)")
        hashes["builder/iso.py" if path == Path(__file__) else path.name] = _sha256(path)
    return hashes


def is_current(out_dir: Path, inputs: dict[str, Any], *, verify: bool = False) -> BootIso | None:
    """The image in `out_dir` when its manifest records these inputs and the file is intact
    (its size; its sha256 too with `verify`)."""
    manifest = read_manifest(out_dir)
    if not manifest or manifest.get("format") != FORMAT or manifest.get("inputs") != inputs:
        return None
    try:
        iso = BootIso.from_manifest(out_dir, manifest)
        recorded = manifest["iso"]
        if iso.path.stat().st_size != recorded["size"]:
            return None
        if verify and _sha256(iso.path) != recorded["sha256"]:
            return None
    except (OSError, KeyError, TypeError, ValueError):
        return None
    return iso


def _ramdisk_manifest(ramdisk_dir: Path) -> dict[str, Any]:
    """The ramdisk's manifest; a RamdiskError saying what is missing if it is not built."""
    missing = [name for name in ("manifest.json", "vmlinuz", "initramfs")
               if not (ramdisk_dir / name).is_file()]
    manifest: Any = None
    if not missing:
        try:
            manifest = json.loads((ramdisk_dir / "manifest.json").read_text())
        except (OSError, ValueError):
            missing = ["a readable manifest.json"]
    if not missing and not (isinstance(manifest, dict) and manifest.get("input_hash")
                            and isinstance(manifest.get("files"), dict)):
        missing = ["input_hash and files in manifest.json"]
    if missing:
        raise RamdiskError(f"the ramdisk in {ramdisk_dir} is not built: no "
                           f"{', '.join(missing)} (run `ironsight ramdisk build` first)")
    for name in ("vmlinuz", "initramfs"):
        recorded = manifest["files"].get(name)
        if not isinstance(recorded, dict) or (
                (ramdisk_dir / name).stat().st_size != recorded.get("size")):
            raise RamdiskError(f"{ramdisk_dir / name} does not match its manifest: "
                               "rebuild the ramdisk")
    result: dict[str, Any] = manifest
    return result


def _make_iso(ramdisk_dir: Path, tmp: Path, dest: Path) -> int:
    """Write the image to `dest` (by rename); the offset of the parameter block in it."""
    tree = tmp / "tree"
    (tree / ".disk").mkdir(parents=True)
    (tree / ".disk" / "info").write_text("ironsight discovery ramdisk\n")
    grub = tree / "boot" / "grub"
    grub.mkdir(parents=True)
    (grub / "grub.cfg").write_text(GRUB_CFG)
    marker = secrets.token_hex(16).encode()
    block = placeholder(marker)
    (tree / PARAMS_FILE).write_bytes(block)
    run(["grub-mkimage", "-O", "i386-pc-eltorito", "-p", "/boot/grub", "-d", GRUB_PC,
         "-o", grub / "bios.img", *GRUB_PC_MODULES])
    _efi_image(tree / "efiboot.img")
    partial = dest.with_name(f".{dest.name}.tmp")
    try:
        # -r: Rock Ridge with sane owners/modes; no -z (zisofs), no --md5: file data stays
        # plain, so swapping the parameter block's bytes invalidates nothing
        run(["xorriso", "-as", "mkisofs", "-o", partial, "-V", VOLUME_ID, "-r", "-J",
             "-graft-points",
             "-b", "boot/grub/bios.img", "-no-emul-boot", "-boot-load-size", "4",
             "-boot-info-table",
             "-eltorito-alt-boot", "-e", "efiboot.img", "-no-emul-boot",
             tree, f"/vmlinuz={ramdisk_dir / 'vmlinuz'}",
             f"/initramfs={ramdisk_dir / 'initramfs'}"])
        offset = find_block(partial, block)
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)
    return offset


def _efi_image(dest: Path) -> None:
    """The FAT image UEFI's El Torito entry points at: shim, the GRUB it loads, MokManager."""
    files = {"BOOTX64.EFI": SHIM, "grubx64.efi": GRUB_EFI, "mmx64.efi": MOK_MANAGER}
    used = sum(path.stat().st_size for path in files.values())
    size = (used * 11 // 10 + (1 << 20)) // (1 << 20) * (1 << 20)  # 10% + 1 MiB for FAT
    with dest.open("wb") as f:
        f.truncate(size)
    image = str(dest)
    run(["mformat", "-i", image, "-N", "0", "-v", "IRONSIGHT", "::"])
    run(["mmd", "-i", image, "::/EFI", "::/EFI/BOOT"])
    for name, path in files.items():
        run(["mcopy", "-i", image, path, f"::/EFI/BOOT/{name}"])


def find_block(iso: Path, block: bytes) -> int:
    """Where `block` (the placeholder, unique by its random marker) is in the image: once,
    and at the start of a sector, as ISO 9660 file data always is."""
    with iso.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        offset = data.find(block)
        if offset < 0:
            raise RamdiskError(f"{iso}: the parameter placeholder is not in the image "
                               "(compressed or split by xorriso?)")
        if data.find(block, offset + 1) >= 0:
            raise RamdiskError(f"{iso}: the parameter placeholder is in the image twice")
    if offset % SECTOR:
        raise RamdiskError(f"{iso}: the parameter placeholder is at {offset}, not at the "
                           f"start of a {SECTOR}-byte sector")
    return offset


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive flock on `path`: one ISO build per output directory at a time. Its own
    lock file (not the ramdisk's `.lock`), so that both may live in one directory."""
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _replace(dest: Path, write: Callable[[Path], object]) -> None:
    tmp = dest.with_name(f".{dest.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
