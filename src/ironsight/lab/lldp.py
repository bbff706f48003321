"""The lab's switch, as far as LLDP goes: an LLDPDU per VM tap, every second.

Each tap is a switch port: the frame sent on it names the lab's chassis (the bridge's MAC,
chassis ID subtype 4, so that Ironic's `local-link-connection` takes it as `switch_id`) and
that tap as the port (port ID subtype 5, interface name), so each VM sees its own port.
Frames are written on the tap itself, not the bridge: a bridge does not forward the LLDP
multicast group, and a frame written on a tap goes to that VM only.

The sender runs in the lab daemon; its sockets are opened inside the lab's namespace.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from ironsight.lab import network

LOG = logging.getLogger(__name__)

ETH_P_LLDP = 0x88CC
MULTICAST = bytes.fromhex("0180c200000e")
CHASSIS_MAC, PORT_NAME = 4, 5  # chassis ID / port ID subtypes
TLV_CHASSIS, TLV_PORT, TLV_TTL, TLV_SYSTEM_NAME = 1, 2, 3, 5
INTERVAL = 1.0
SYSTEM_NAME = "ironsight-lab"


@dataclass(frozen=True)
class Port:
    chassis_mac: str
    port_id: str


def tlv(kind: int, value: bytes) -> bytes:
    if len(value) > 511:
        raise ValueError(f"an LLDP TLV value holds at most 511 octets, not {len(value)}")
    return ((kind << 9) | len(value)).to_bytes(2, "big") + value


def frame(port: Port, *, ttl: int = 120, system_name: str = SYSTEM_NAME) -> bytes:
    """A complete Ethernet frame: header, chassis ID, port ID, TTL, system name, End."""
    mac = bytes.fromhex(port.chassis_mac.replace(":", ""))
    return (MULTICAST + mac + ETH_P_LLDP.to_bytes(2, "big")
            + tlv(TLV_CHASSIS, bytes([CHASSIS_MAC]) + mac)
            + tlv(TLV_PORT, bytes([PORT_NAME]) + port.port_id.encode())
            + tlv(TLV_TTL, ttl.to_bytes(2, "big"))
            + tlv(TLV_SYSTEM_NAME, system_name.encode())
            + tlv(0, b""))


def ports(chassis_mac: str, taps: list[str]) -> dict[str, Port]:
    """The lab's port map: one port per tap, named after it."""
    return {tap: Port(chassis_mac, tap) for tap in taps}


class Sender:
    """Writes each tap's frame on it every `interval` seconds until `close`."""

    def __init__(self, namespace: str, port_map: Mapping[str, Port],
                 interval: float = INTERVAL) -> None:
        self.frames = {tap: frame(port) for tap, port in port_map.items()}
        self.interval = interval
        self._stop = threading.Event()
        with network.entered(namespace):
            self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self._thread = threading.Thread(target=self._run, daemon=True, name="lldp-sender")

    def start(self) -> Sender:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._sock.close()

    def send_once(self) -> int:
        """Frames written; a tap whose VM is off may refuse one: it is tried next time."""
        sent = 0
        for tap, data in self.frames.items():
            try:
                self._sock.sendto(data, (tap, ETH_P_LLDP))
                sent += 1
            except OSError as exc:
                LOG.debug("LLDP on %s: %s", tap, exc)
        return sent

    def _run(self) -> None:
        while True:
            self.send_once()
            if self._stop.wait(self.interval):
                return
