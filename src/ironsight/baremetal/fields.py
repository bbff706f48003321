"""The node fields ironsight knows the meaning of (`properties` and `driver_info` keys), checked
with one definition where they are set (create, PATCH: 400 naming the field) and where the
drivers read them. Unknown keys are the operator's own and pass untouched; known ones are
stored as given (a numeric string stays a string, as in Ironic, whose clients send
`--property cpus=4` as "4").
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Mapping
from typing import Any

from ironsight.common.exceptions import InvalidParameterValue

LOG = logging.getLogger(__name__)

# Bounds of the sizing properties: a signed 32-bit integer (2 PiB of RAM, 2 EB of disk,
# two billion CPUs) is past any machine, and every consumer can hold it.
MAX_SIZE = 2**31 - 1
SIZE_PROPERTIES = ("cpus", "memory_mb", "local_gb")
# Architectures Ironic and its ramdisks report; another one is stored, with a warning.
KNOWN_ARCHES = frozenset({"x86_64", "i686", "i386", "aarch64", "armv7l", "ppc64le", "ppc64",
                          "s390x", "riscv64", "mips64", "loongarch64"})

PORT_FIELDS = ("ipmi_port", "ssh_port")
ADDRESS_FIELDS = ("ipmi_address", "ssh_address")
SECRET_FIELDS = ("ipmi_password", "ssh_password", "ssh_key_contents", "redfish_password")
STRING_FIELDS = ("ipmi_username", "ssh_username", "ssh_vm_name", "ssh_virt_type",
                 "redfish_address", "redfish_username", "redfish_system_id",
                 "redfish_auth_type")

_LABEL = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
_DIGITS = re.compile(r"[0-9]{1,10}")

# Ironic's strutils.bool_from_string(strict=True) spellings.
TRUE_STRINGS = frozenset({"1", "t", "true", "on", "y", "yes"})
FALSE_STRINGS = frozenset({"0", "f", "false", "off", "n", "no"})


def ironic_bool(value: Any) -> bool:
    """A boolean as Ironic's API takes one: true/false, or a string spelling ("True", "on",
    "0"...), case and surrounding blanks ignored. Anything else is a ValueError."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_STRINGS:
            return True
        if word in FALSE_STRINGS:
            return False
    # oslo's words (strutils.bool_from_string), which Ironic answers with
    accepted = ", ".join(f"'{word}'" for word in sorted(TRUE_STRINGS | FALSE_STRINGS))
    raise ValueError(f"Unrecognized value {value!r}, acceptable values are: {accepted}")


def _integer(value: Any) -> int | None:
    """An integer, or a string of at most 10 decimal digits; None otherwise (a bool, a float,
    'abc', a 401-digit string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        return int(value.strip())
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


def port_number(where: str, key: str, value: Any) -> int:
    """A TCP/UDP port: an integer (or numeric string, as Ironic's drivers take) 1..65535."""
    port = _integer(value)
    if port is None or not 0 < port < 65536:
        raise InvalidParameterValue(
            f"{where} field '{key}' must be an integer from 1 to 65535, got {_shown(value)}")
    return port


def host_address(where: str, key: str, value: Any) -> str:
    """A host name or an IP address (IPv6 possibly in brackets): no blanks, no control
    characters, nothing a command line or URL could be tricked with."""
    if isinstance(value, str) and _is_host(value):
        return value
    raise InvalidParameterValue(
        f"{where} field '{key}' must be a host name or an IP address, got {_shown(value)}")


def _is_host(text: str) -> bool:
    if not text or len(text) > 253:
        return False
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        ipaddress.ip_address(bare)
        return True
    except ValueError:
        pass
    return bare == text and all(_LABEL.fullmatch(label) for label in text.rstrip(".").split("."))


def size(key: str, value: Any) -> int:
    number = _integer(value)
    if number is None or not 0 <= number <= MAX_SIZE:
        raise InvalidParameterValue(
            f"properties field '{key}' must be an integer from 0 to {MAX_SIZE}, "
            f"got {_shown(value)}")
    return number


def check_properties(properties: Mapping[str, Any]) -> None:
    """Refuse (400) a known property of the wrong type or out of bounds; warn of an unknown
    architecture (a new one should not need a new ironsight)."""
    for key in SIZE_PROPERTIES:
        if properties.get(key) not in (None, ""):  # "": unset, as for cpu_arch
            size(key, properties[key])
    arch = properties.get("cpu_arch")
    if arch in (None, ""):  # unset (inspection fills an empty property in)
        return
    if not isinstance(arch, str) or len(arch) > 64 or not arch.isprintable():
        raise InvalidParameterValue(
            f"properties field 'cpu_arch' must be an architecture name, got {_shown(arch)}")
    if arch not in KNOWN_ARCHES:
        LOG.warning("properties field 'cpu_arch' is %r, not a known architecture (%s); "
                    "stored as given", arch, ", ".join(sorted(KNOWN_ARCHES)))


def check_driver_info(info: Mapping[str, Any]) -> None:
    """Refuse (400) a known driver_info field of the wrong type; whether the fields a driver
    needs are all there is the driver's `validate` (a node may be enrolled bit by bit)."""
    for key in PORT_FIELDS:
        if info.get(key) not in (None, ""):
            port_number("driver_info", key, info[key])
    for key in ADDRESS_FIELDS:
        if info.get(key) not in (None, ""):
            host_address("driver_info", key, info[key])
    for key in STRING_FIELDS:
        if info.get(key) is not None and not isinstance(info[key], str):
            raise InvalidParameterValue(
                f"driver_info field '{key}' must be a string, got {_shown(info[key])}")
    for key in SECRET_FIELDS:
        if info.get(key) is not None and not isinstance(info[key], str):
            # no value in this message: it is a secret
            raise InvalidParameterValue(f"driver_info field '{key}' must be a string")
