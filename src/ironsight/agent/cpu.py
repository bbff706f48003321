"""CPU facts in IPA's shape: `/proc/cpuinfo` plus sysfs, no `lscpu` in the ramdisk."""

from __future__ import annotations

import os

from .sysfs import is_live, join, listdir, read, read_int

_MODEL_KEYS = ("model name", "Processor", "cpu model", "cpu")  # x86, old ARM, MIPS, POWER
_FLAG_KEYS = ("flags", "Features")  # x86, ARM


def collect(root: str = "/") -> dict[str, object]:
    blocks = _cpuinfo(read(join(root, "proc/cpuinfo")) or "")
    processors = [block for block in blocks if "processor" in block]
    first = processors[0] if processors else (blocks[0] if blocks else {})
    return {
        "model_name": _first(first, _MODEL_KEYS),
        "frequency": _frequency(root, first),
        "count": len(processors) or _online_count(root),
        "architecture": _architecture(root),
        "flags": (_first(first, _FLAG_KEYS) or "").split(),
        "socket_count": _socket_count(root, processors),
    }


def _cpuinfo(text: str) -> list[dict[str, str]]:
    blocks: list[dict[str, str]] = []
    for chunk in text.split("\n\n"):
        block = {}
        for line in chunk.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                block[key.strip()] = value.strip()
        if block:
            blocks.append(block)
    return blocks


def _first(block: dict[str, str], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if block.get(key):
            return block[key]
    return None


def _frequency(root: str, first: dict[str, str]) -> str | None:
    """MHz as a string like lscpu, which IPA reads: the maximum when cpufreq knows it."""
    max_khz = read_int(join(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))
    if max_khz:
        return f"{max_khz / 1000:.4f}"
    return first.get("cpu MHz") or None


def _online_count(root: str) -> int:
    """Count from sysfs ranges such as `0-3,6`, for cpuinfo formats without `processor`."""
    text = read(join(root, "sys/devices/system/cpu/online"))
    if not text:
        return (os.cpu_count() or 0) if is_live(root) else 0
    count = 0
    for part in text.split(","):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    return count


def _architecture(root: str) -> str | None:
    arch = read(join(root, "proc/sys/kernel/arch"))  # Linux >= 5.13; uname on older kernels
    if arch:
        return arch
    return os.uname().machine if is_live(root) else None


def _socket_count(root: str, processors: list[dict[str, str]]) -> int:
    ids = {block["physical id"] for block in processors if "physical id" in block}
    if not ids:
        cpus = join(root, "sys/devices/system/cpu")
        for name in listdir(cpus):
            if name[3:].isdigit() and name.startswith("cpu"):
                package = read(os.path.join(cpus, name, "topology/physical_package_id"))
                if package is not None:
                    ids.add(package)
    return len(ids) or 1
