"""LLDPDUs built byte by byte as IEEE 802.1AB-2016 lays them out, and reported the way
ironic-python-agent reports them (`[[type, hexvalue], ...]` per interface).

A TLV is a 2-octet header (7-bit type, 9-bit length) and its value; the helpers build whole
frames' payloads and then split them back at the headers, as the agent does, so that the
tests feed the hooks what a switch would really send.
"""

from __future__ import annotations

import ipaddress

OUI_802_1 = bytes.fromhex("0080c2")
OUI_802_3 = bytes.fromhex("00120f")


def tlv(kind: int, value: bytes) -> bytes:
    assert 0 <= kind < 128 and len(value) < 512, "802.1AB: 7-bit type, 9-bit length"
    return (kind << 9 | len(value)).to_bytes(2, "big") + value


def mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def chassis_mac(address: str) -> bytes:
    return tlv(1, b"\x04" + mac(address))  # subtype 4: MAC address


def chassis_local(name: str) -> bytes:
    return tlv(1, b"\x07" + name.encode())  # subtype 7: locally assigned


def chassis_ip(address: str) -> bytes:
    packed = ipaddress.ip_address(address).packed  # subtype 5: network address (IANA family)
    return tlv(1, b"\x05" + (b"\x01" if len(packed) == 4 else b"\x02") + packed)


def port_name(name: str) -> bytes:
    return tlv(2, b"\x05" + name.encode())  # subtype 5: interface name


def port_mac(address: str) -> bytes:
    return tlv(2, b"\x03" + mac(address))  # subtype 3: MAC address


def ttl(seconds: int = 120) -> bytes:
    return tlv(3, seconds.to_bytes(2, "big"))


def port_description(text: str) -> bytes:
    return tlv(4, text.encode())


def system_name(text: str | bytes) -> bytes:
    return tlv(5, text if isinstance(text, bytes) else text.encode())


def system_description(text: str) -> bytes:
    return tlv(6, text.encode())


def capabilities(system: int, enabled: int) -> bytes:
    return tlv(7, system.to_bytes(2, "big") + enabled.to_bytes(2, "big"))


def management_address(address: str) -> bytes:
    packed = ipaddress.ip_address(address).packed
    family = b"\x01" if len(packed) == 4 else b"\x02"
    # address string length, family + address, interface numbering (ifIndex 1), no OID
    return tlv(8, bytes([1 + len(packed)]) + family + packed + b"\x02" + (1).to_bytes(4, "big")
               + b"\x00")


def org(oui: bytes, subtype: int, value: bytes) -> bytes:
    return tlv(127, oui + bytes([subtype]) + value)


def end() -> bytes:
    return tlv(0, b"")


def lldpdu(*tlvs: bytes) -> bytes:
    """The mandatory TLVs first are the caller's to include; an end TLV closes it."""
    return b"".join(tlvs) + end()


def reported(frame: bytes) -> list[list[object]]:
    """The frame as the agent reports it: each TLV's type and hex value, in order."""
    found: list[list[object]] = []
    while frame:
        header = int.from_bytes(frame[:2], "big")
        kind, length = header >> 9, header & 0x1FF
        found.append([kind, frame[2:2 + length].hex()])
        frame = frame[2 + length:]
    return found


SWITCH_MAC = "00:1c:73:aa:bb:cc"


def switch_port(port: str = "Ethernet12", switch: str = "leaf-1",
                chassis: bytes | None = None) -> list[list[object]]:
    """A typical top-of-rack switch's LLDPDU for one port, as reported."""
    return reported(lldpdu(chassis or chassis_mac(SWITCH_MAC), port_name(port), ttl(),
                           system_name(switch)))
