"""LLDP TLVs as ramdisks report them, decoded into upstream's `parsed_lldp` names.

A ramdisk (ironic-python-agent, or ours) reports each interface's LLDPDU as a list of
`[type, hexvalue]` pairs: in `lldp_raw` ({interface name: [...]}) or, the older place, in the
inventory's `interfaces[].lldp`. `decode` turns one such list into `(type, bytes)`; `parse`
turns those into the name/value pairs Ironic's `parse-lldp` hook stores (802.1AB basic
management set, 802.1Q and 802.3 organisationally specific TLVs), with Ironic's key names and
value shapes, so that inspection rules written for Ironic read the same data here.

Both never raise on what a switch or a ramdisk sent: a TLV that cannot be decoded is skipped
and described in the returned problems (the hooks turn those into warnings). As upstream does
since its fixes, a TLV whose text is not UTF-8 is skipped, a value longer than 511 octets (the
most 802.1AB allows) is dropped, and only the first 64 interfaces are read (`MAX_INTERFACES`).
The first value of a single-valued name wins, as upstream's parser does.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_VALUE_OCTETS = 511
MAX_INTERFACES = 64

# TLV types (IEEE 802.1AB-2016 §8.4)
END, CHASSIS_ID, PORT_ID, TTL, PORT_DESCRIPTION, SYSTEM_NAME, SYSTEM_DESCRIPTION, \
    SYSTEM_CAPABILITIES, MANAGEMENT_ADDRESS = range(9)
ORG_SPECIFIC = 127
OUI_802_1 = b"\x00\x80\xc2"
OUI_802_3 = b"\x00\x12\x0f"

# Chassis ID subtypes that are text, and the one that is a MAC; the same for port IDs.
_CHASSIS_TEXT = {1, 2, 3, 6, 7}
CHASSIS_MAC, CHASSIS_ADDRESS = 4, 5
_PORT_TEXT = {1, 2, 5, 7}
PORT_MAC, PORT_ADDRESS = 3, 4

# System capabilities, by bit (value 1 << bit), as 802.1AB Table 8-4 names them; bit 0
# ("other") has no name upstream.
_CAPABILITIES = ((1, "Repeater"), (2, "Bridge"), (3, "WLAN"), (4, "Router"), (5, "Telephone"),
                 (6, "DOCSIS cable device"), (7, "Station only"), (8, "C-Vlan"),
                 (9, "S-Vlan"), (10, "TPMR"))

# PMD auto-negotiation advertised capabilities (RFC 4836 IANAifMauAutoNegCapBits; SNMP BITS
# number bit 0 as the most significant bit of the 16).
_AUTONEG_CAPABILITIES = ((1, "10BASE-T hdx"), (2, "10BASE-T fdx"), (3, "10BASE-T4"),
                         (4, "100BASE-TX hdx"), (5, "100BASE-TX fdx"), (6, "100BASE-T2 hdx"),
                         (7, "100BASE-T2 fdx"), (8, "PAUSE fdx"), (9, "Asym PAUSE fdx"),
                         (10, "Sym PAUSE fdx"), (11, "Asym and Sym PAUSE fdx"),
                         (12, "1000BASE-X hdx"), (13, "1000BASE-X fdx"),
                         (14, "1000BASE-T hdx"), (15, "1000BASE-T fdx"))

# Operational MAU types (RFC 4836 dot3MauType), the names upstream reports.
MAU_TYPES = (
    "Unknown", "AUI", "10BASE-5", "FOIRL", "10BASE-2", "10BASE-T duplex mode unknown",
    "10BASE-FP", "10BASE-FB", "10BASE-FL duplex mode unknown", "10BROAD36",
    "10BASE-T half duplex", "10BASE-T full duplex", "10BASE-FL half duplex",
    "10BASE-FL full duplex", "100 BASE-T4", "100BASE-TX half duplex", "100BASE-TX full duplex",
    "100BASE-FX half duplex", "100BASE-FX full duplex", "100BASE-T2 half duplex",
    "100BASE-T2 full duplex", "1000BASE-X half duplex", "1000BASE-X full duplex",
    "1000BASE-LX half duplex", "1000BASE-LX full duplex", "1000BASE-SX half duplex",
    "1000BASE-SX full duplex", "1000BASE-CX half duplex", "1000BASE-CX full duplex",
    "1000BASE-T half duplex", "1000BASE-T full duplex", "10GBASE-X", "10GBASE-LX4",
    "10GBASE-R", "10GBASE-ER", "10GBASE-LR", "10GBASE-SR", "10GBASE-W", "10GBASE-EW",
    "10GBASE-LW", "10GBASE-SW", "10GBASE-CX4", "2BASE-TL", "10PASS-TS", "100BASE-BX10D",
    "100BASE-BX10U", "100BASE-LX10", "1000BASE-BX10D", "1000BASE-BX10U", "1000BASE-LX10",
    "1000BASE-PX10D", "1000BASE-PX10U", "1000BASE-PX20D", "1000BASE-PX20U")


class TlvError(ValueError):
    """One TLV cannot be read; the message says why."""


Tlv = tuple[int, bytes]


def reported_tlvs(data: dict[str, Any], interface: dict[str, Any]) -> Any:
    """An interface's reported TLVs: `lldp_raw[name]` first, else `interfaces[].lldp`, as
    upstream reads them (None: the ramdisk reported no LLDP for it)."""
    raw = data.get("lldp_raw")
    found = raw.get(interface.get("name")) if isinstance(raw, dict) else None
    return found or interface.get("lldp")


def decode(reported: Any) -> tuple[list[Tlv], list[str]]:
    """`[[type, hexvalue], ...]` as `(type, value bytes)`, and what could not be decoded."""
    if not isinstance(reported, list | tuple):
        return [], [f"LLDP data is not a list of [type, hexvalue] pairs: {reported!r:.80}"]
    tlvs: list[Tlv] = []
    problems: list[str] = []
    for entry in reported:
        if (not isinstance(entry, list | tuple) or len(entry) != 2
                or not isinstance(entry[0], int) or isinstance(entry[0], bool)
                or not isinstance(entry[1], str)):
            problems.append(f"LLDP TLV {entry!r:.80} is not a [type, hexvalue] pair")
            continue
        try:
            tlvs.append((entry[0], bytes.fromhex(entry[1])))
        except ValueError:
            problems.append(f"LLDP TLV type {entry[0]}: value is not hexadecimal "
                            f"({entry[1]!r:.80})")
    return tlvs, problems


def _text(value: bytes, what: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise TlvError(f"{what} is not UTF-8 text") from None


def _mac(value: bytes, what: str) -> str:
    if len(value) < 6:
        raise TlvError(f"{what}: a MAC address needs 6 octets, got {len(value)}")
    return ":".join(f"{octet:02x}" for octet in value[:6])


def _address(value: bytes, what: str) -> str | None:
    """An IANA address-family-prefixed address (RFC 3232); None for families upstream does
    not read (its parser leaves those empty)."""
    if not value:
        raise TlvError(f"{what}: no address family")
    family, rest = value[0], value[1:]
    if family == 1:
        if len(rest) < 4:
            raise TlvError(f"{what}: an IPv4 address needs 4 octets, got {len(rest)}")
        return str(ipaddress.IPv4Address(rest[:4]))
    if family == 2:
        if len(rest) < 16:
            raise TlvError(f"{what}: an IPv6 address needs 16 octets, got {len(rest)}")
        return str(ipaddress.IPv6Address(rest[:16]))
    if family == 6:
        return _mac(rest, what)
    return None


def _uint(value: bytes, size: int, what: str, *, exact: bool = False) -> int:
    if len(value) < size or (exact and len(value) != size):
        raise TlvError(f"{what}: expected {size} octets, got {len(value)}")
    return int.from_bytes(value[:size], "big")


@dataclass(frozen=True)
class Identifier:
    """A chassis or port ID: its subtype and its value (None: a subtype with no reading)."""

    subtype: int
    value: str | None


def chassis_id(value: bytes) -> Identifier:
    return _identifier(value, "chassis ID", _CHASSIS_TEXT, CHASSIS_MAC, CHASSIS_ADDRESS)


def port_id(value: bytes) -> Identifier:
    return _identifier(value, "port ID", _PORT_TEXT, PORT_MAC, PORT_ADDRESS)


def _identifier(value: bytes, what: str, text: set[int], mac: int,
                address: int) -> Identifier:
    if not value:
        raise TlvError(f"{what}: empty")
    subtype, rest = value[0], value[1:]
    if subtype in text:
        return Identifier(subtype, _text(rest, what))
    if subtype == mac:
        return Identifier(subtype, _mac(rest, what))
    if subtype == address:
        return Identifier(subtype, _address(rest, what))
    raise TlvError(f"{what}: unknown subtype {subtype}")


def _bits(value: int, names: Sequence[tuple[int, str]]) -> list[str]:
    """The names whose bit (numbered from the least significant) is set in `value`."""
    return [name for bit, name in names if value >> bit & 1]


@dataclass
class Parsed:
    """What an interface's TLVs say, by upstream's names."""

    values: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def set(self, name: str, value: Any) -> None:
        self.values.setdefault(name, value)

    def append(self, name: str, value: Any) -> None:
        self.values.setdefault(name, []).append(value)


def parse(tlvs: Sequence[Tlv]) -> Parsed:
    """Upstream's `parsed_lldp` for one interface. TLV types and subtypes it does not know
    are ignored, as upstream ignores them."""
    parsed = Parsed()
    for kind, value in tlvs:
        if len(value) > MAX_VALUE_OCTETS:
            parsed.problems.append(f"LLDP TLV type {kind}: {len(value)} octets, more than "
                                   f"{MAX_VALUE_OCTETS}; dropped")
            continue
        handler = _BASIC.get(kind)
        if handler is None:
            continue
        try:
            handler(parsed, value)
        except TlvError as exc:
            parsed.problems.append(f"LLDP TLV type {kind}: {exc}; skipped")
    return parsed


def _chassis(parsed: Parsed, value: bytes) -> None:
    found = chassis_id(value)
    if found.value is not None:
        parsed.set("switch_chassis_id", found.value)


def _port(parsed: Parsed, value: bytes) -> None:
    found = port_id(value)
    if found.value is not None:
        parsed.set("switch_port_id", found.value)


def _text_named(name: str) -> Callable[[Parsed, bytes], None]:
    def handle(parsed: Parsed, value: bytes) -> None:
        parsed.set(name, _text(value, name))
    return handle


def _capabilities(parsed: Parsed, value: bytes) -> None:
    if len(value) != 4:
        raise TlvError(f"system capabilities: expected 4 octets, got {len(value)}")
    system, enabled = int.from_bytes(value[:2], "big"), int.from_bytes(value[2:], "big")
    parsed.set("switch_capabilities_support", _bits(system, _CAPABILITIES))
    parsed.set("switch_capabilities_enabled", _bits(enabled, _CAPABILITIES))


def _management_address(parsed: Parsed, value: bytes) -> None:
    # address string length (family octet included), then the address; the interface
    # numbering and OID that follow are not read (nor are they upstream).
    if len(value) < 2:
        raise TlvError("management address: too short")
    address = _address(value[1:], "management address")
    if address:
        parsed.append("switch_mgmt_addresses", address)


def _org_specific(parsed: Parsed, value: bytes) -> None:
    if len(value) < 4:
        raise TlvError("organizationally specific TLV: shorter than its OUI and subtype")
    oui, subtype, rest = value[:3], value[3], value[4:]
    table = {OUI_802_1: _DOT1, OUI_802_3: _DOT3}.get(oui)
    handler = table.get(subtype) if table else None
    if handler is not None:
        try:
            handler(parsed, rest)
        except TlvError as exc:
            raise TlvError(f"OUI {oui.hex()} subtype {subtype}: {exc}") from None


def _untagged_vlan(parsed: Parsed, value: bytes) -> None:
    parsed.set("switch_port_untagged_vlan_id", _uint(value, 2, "port VLAN ID"))


def _protocol_vlan(parsed: Parsed, value: bytes) -> None:
    flags = _uint(value[:1], 1, "port and protocol VLAN flags")
    vlan = _uint(value[1:], 2, "port and protocol VLAN ID", exact=True)
    parsed.set("switch_port_protocol_vlan_enabled", bool(flags & 0x04))
    parsed.set("switch_port_protocol_vlan_support", bool(flags & 0x02))
    parsed.append("switch_port_protocol_vlan_ids", vlan)


def _vlan_name(parsed: Parsed, value: bytes) -> None:
    vlan = _uint(value, 2, "VLAN name: VLAN ID")
    length = _uint(value[2:3], 1, "VLAN name: length")
    name = value[3:3 + length]
    if len(name) != length:
        raise TlvError(f"VLAN name: {length} octets announced, {len(name)} present")
    parsed.append("switch_port_vlans", {"name": _text(name, "VLAN name").rstrip("\x00"),
                                        "id": vlan})


def _protocol_identity(parsed: Parsed, value: bytes) -> None:
    length = _uint(value[:1], 1, "protocol identity: length")
    identity = value[1:1 + length]
    if len(identity) != length:
        raise TlvError(f"protocol identity: {length} octets announced, {len(identity)} present")
    parsed.append("switch_protocol_identities", identity.hex())


def _management_vlan(parsed: Parsed, value: bytes) -> None:
    parsed.set("switch_port_management_vlan_id", _uint(value, 2, "management VLAN ID"))


def _link_aggregation(parsed: Parsed, value: bytes) -> None:
    if len(value) != 5:
        raise TlvError(f"link aggregation: expected 5 octets, got {len(value)}")
    parsed.set("switch_port_link_aggregation_enabled", bool(value[0] & 0x02))
    parsed.set("switch_port_link_aggregation_support", bool(value[0] & 0x01))
    parsed.set("switch_port_link_aggregation_id", int.from_bytes(value[1:], "big"))


def _mac_phy(parsed: Parsed, value: bytes) -> None:
    if len(value) != 5:
        raise TlvError(f"MAC/PHY configuration: expected 5 octets, got {len(value)}")
    autoneg, pmd, mau = value[0], int.from_bytes(value[1:3], "big"), \
        int.from_bytes(value[3:], "big")
    if mau >= len(MAU_TYPES):
        raise TlvError(f"MAC/PHY configuration: unknown MAU type {mau}")
    # RFC 4836 numbers bit 0 as the most significant of the 16
    advertised = sorted(_bits(pmd, [(15 - bit, name) for bit, name in _AUTONEG_CAPABILITIES]))
    parsed.set("switch_port_autonegotiation_enabled", bool(autoneg & 0x02))
    parsed.set("switch_port_autonegotiation_support", bool(autoneg & 0x01))
    parsed.set("switch_port_physical_capabilities", advertised)
    parsed.set("switch_port_mau_type", MAU_TYPES[mau])


def _mtu(parsed: Parsed, value: bytes) -> None:
    parsed.set("switch_port_mtu", _uint(value, 2, "maximum frame size"))


def _nothing(parsed: Parsed, value: bytes) -> None:
    """A TLV that is understood and carries nothing to store (TTL, end of LLDPDU)."""


Handler = Callable[[Parsed, bytes], None]
_BASIC: dict[int, Handler] = {
    END: _nothing, CHASSIS_ID: _chassis, PORT_ID: _port, TTL: _nothing,
    PORT_DESCRIPTION: _text_named("switch_port_description"),
    SYSTEM_NAME: _text_named("switch_system_name"),
    SYSTEM_DESCRIPTION: _text_named("switch_system_description"),
    SYSTEM_CAPABILITIES: _capabilities, MANAGEMENT_ADDRESS: _management_address,
    ORG_SPECIFIC: _org_specific,
}
_DOT1: dict[int, Handler] = {1: _untagged_vlan, 2: _protocol_vlan, 3: _vlan_name,
                             4: _protocol_identity, 6: _management_vlan,
                             7: _link_aggregation}
_DOT3: dict[int, Handler] = {1: _mac_phy, 3: _link_aggregation, 4: _mtu}
