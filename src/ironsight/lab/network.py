"""The lab's isolated network: one network namespace holding a bridge and one tap per VM.

Nothing in the namespace leads out of it: its only interfaces are `lo`, the bridge and the
taps, it has no default route and forwarding is off, and the VMs are handed no router. The
bridge has a fixed MAC (otherwise it takes the lowest MAC of its ports and changes as taps
come and go, which changes the source of the router advertisements iPXE waits for), an IPv4
/24 for DHCP and a ULA /64 so that dnsmasq can send those advertisements.

The root namespace reaches services inside only through sockets that a process of ours
creates *in* the namespace (`entered`, `PortForward`): no interface, route or veth joins the
two, so a VM can reach nothing but what listens on the bridge address.

An IPv6-only VM's tap is a port of the same bridge where IPv4 does not pass: nftables rules of
the bridge family, in the namespace (so nothing of the machine's own firewall changes), drop
every IPv4 and ARP frame from and to it, whatever the VM or the bridge's side send; the VM
reaches discoverd over IPv6 or not at all. They match ports by name, so they hold for a tap
created, deleted or recreated later too.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ironsight.client.wait import Poller, until
from ironsight.common.netns import NETNS_DIR, entered

LOG = logging.getLogger(__name__)

NFT = "nft"
NFT_TABLE = "ironsight_lab"  # family bridge, in the lab's namespace
PORT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,15}")
COMMAND_TIMEOUT = 20.0


class NetworkError(Exception):
    """An `ip` command failed; the message holds the command and its error."""


@dataclass(frozen=True)
class LabNetwork:
    namespace: str = "ironsight-lab"
    bridge: str = "br-lab"
    bridge_mac: str = "02:00:0a:14:00:01"
    ipv4: str = "10.20.0.1/24"
    ipv6: str = "fd20:20::1/64"
    ipv6_only_taps: tuple[str, ...] = ()  # ports where no IPv4 or ARP frame passes

    def __post_init__(self) -> None:
        object.__setattr__(self, "ipv6_only_taps", tuple(self.ipv6_only_taps))  # lab.json: list

    @property
    def address(self) -> str:
        """The bridge's IPv4 address: where VMs reach discoverd."""
        return self.ipv4.split("/")[0]

    @property
    def prefix(self) -> list[str]:
        """Runs a command inside the namespace."""
        return ["ip", "netns", "exec", self.namespace]

    @property
    def address6(self) -> str:
        """The bridge's IPv6 address: where IPv6-only VMs reach discoverd."""
        return self.ipv6.split("/")[0]

    def dhcp_range_ipv6(self, lease: str = "10m") -> str:
        """DHCPv6 for UEFI's PXE over IPv6 (hosts ::100-::1ff), and SLAAC for the ramdisk."""
        net = ipaddress.ip_interface(self.ipv6).network
        return f"{net[0x100]},{net[0x1ff]},slaac,{net.prefixlen},{lease}"

    def dhcp_range(self, lease: str = "10m") -> str:
        """dnsmasq's range: hosts .100-.199 of the /24 (or the top half of a larger net)."""
        net = ipaddress.ip_interface(self.ipv4).network
        first, last = (100, 199) if net.num_addresses >= 256 else (net.num_addresses // 2,
                                                                    net.num_addresses - 2)
        return f"{net[first]},{net[last]},{net.netmask},{lease}"

    @property
    def path(self) -> Path:
        return NETNS_DIR / self.namespace


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(["ip", *args], capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NetworkError(f"ip {' '.join(args)}: {exc}") from None
    if check and proc.returncode != 0:
        raise NetworkError(f"`ip {' '.join(args)}` failed: {proc.stderr.strip()}")
    return proc


def exists(net: LabNetwork) -> bool:
    return net.path.exists()


def create(net: LabNetwork, taps: Sequence[str]) -> None:
    """Namespace, bridge and taps; a failure part way leaves nothing behind."""
    if exists(net):
        raise NetworkError(f"network namespace {net.namespace} already exists (a lab is up, "
                           "or was not taken down: `ironsight lab down`)")
    _ip("netns", "add", net.namespace)
    try:
        ns = ("-n", net.namespace)
        _ip(*ns, "link", "set", "lo", "up")
        for key in ("net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"):
            subprocess.run([*net.prefix, "sysctl", "-q", "-w", key], capture_output=True,
                           timeout=COMMAND_TIMEOUT, check=False)
        _ip(*ns, "link", "add", net.bridge, "type", "bridge")
        _ip(*ns, "link", "set", net.bridge, "address", net.bridge_mac)
        _ip(*ns, "addr", "add", net.ipv4, "dev", net.bridge)
        # nodad: the address is usable at once (dnsmasq's RA constructor skips tentative ones)
        _ip(*ns, "-6", "addr", "add", net.ipv6, "dev", net.bridge, "nodad")
        _ip(*ns, "link", "set", net.bridge, "up")
        if net.ipv6_only_taps:  # before the taps: not one IPv4 frame passes
            restrict_to_ipv6(net, net.ipv6_only_taps)
        for tap in taps:
            add_tap(net, tap)
    except BaseException:
        destroy(net)
        raise


def add_tap(net: LabNetwork, tap: str) -> None:
    ns = ("-n", net.namespace)
    _ip(*ns, "tuntap", "add", tap, "mode", "tap")
    _ip(*ns, "link", "set", tap, "master", net.bridge, "up")


def ipv6_only_rules(ports: Iterable[str]) -> str:
    """nft's script replacing the lab's table: IPv4 and ARP frames dropped as they enter the
    bridge from one of `ports` (prerouting) and as they leave it through one (postrouting:
    forwarded, flooded and the bridge's own alike). Untagged frames: the VMs tag none."""
    ports = list(ports)
    for port in ports:  # quoted in the script: a name must not end the quotes
        if not PORT_NAME.fullmatch(port):
            raise ValueError(f"not a lab port name: {port!r}")
    names = ", ".join(f'"{port}"' for port in ports)
    table = f"bridge {NFT_TABLE}"
    return f"""\
table {table}
delete table {table}
table {table} {{
    chain ipv6_only_in {{
        type filter hook prerouting priority filter; policy accept;
        iifname {{ {names} }} ether type {{ ip, arp }} drop
    }}
    chain ipv6_only_out {{
        type filter hook postrouting priority filter; policy accept;
        oifname {{ {names} }} ether type {{ ip, arp }} drop
    }}
}}
"""


def nft_unavailable() -> str | None:
    """Why IPv6-only taps cannot be made here, or None."""
    if shutil.which(NFT) is None:
        return f"{NFT} is not installed (apt-get install nftables)"
    return None


def restrict_to_ipv6(net: LabNetwork, ports: Iterable[str]) -> None:
    """Make `ports` of the lab's bridge IPv6-only (replacing any earlier list): in one nft
    transaction, inside the namespace."""
    ports = list(ports)
    if not ports:
        raise ValueError("no port to make IPv6-only")
    why = nft_unavailable()
    if why:
        raise NetworkError(why)
    argv = [*net.prefix, NFT, "-f", "-"]
    try:
        proc = subprocess.run(argv, input=ipv6_only_rules(ports), capture_output=True,
                              text=True, timeout=COMMAND_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NetworkError(f"{' '.join(argv)}: {exc}") from None
    if proc.returncode != 0:
        raise NetworkError(f"`{' '.join(argv)}` failed: {proc.stderr.strip()}")


def pids(net: LabNetwork) -> list[int]:
    """Processes running inside the namespace."""
    if not exists(net):
        return []
    out = _ip("netns", "pids", net.namespace, check=False).stdout
    return [int(word) for word in out.split() if word.isdigit()]


def destroy(net: LabNetwork, grace: float = 5.0) -> list[int]:
    """End every process left inside the namespace (TERM, then KILL), then delete it and with
    it the bridge and taps. Idempotent; returns the pids it had to end."""
    ended = remaining = pids(net)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in remaining:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if remaining and grace > 0:
            until(lambda: not pids(net), grace, Poller(interval=0.1))
        remaining = pids(net)
    if exists(net):
        _ip("netns", "del", net.namespace)
    return ended


# --- reaching into the namespace from the root namespace -------------------------------------

def connect_in(namespace: str, address: tuple[str, int], timeout: float = 5.0) -> socket.socket:
    """A TCP connection made from inside `namespace`."""
    with entered(namespace):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(address)
        sock.settimeout(None)
    except OSError:
        sock.close()
        raise
    return sock


class PortForward:
    """Publishes a TCP service of the namespace on a root-namespace address: each accepted
    connection is relayed to `target`, connected from inside the namespace."""

    def __init__(self, namespace: str, target: tuple[str, int],
                 listen: tuple[str, int] = ("127.0.0.1", 0)) -> None:
        self.namespace = namespace
        self.target = target
        self._server = socket.create_server(listen, reuse_port=False)
        self.address: tuple[str, int] = self._server.getsockname()[:2]
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True,
                                        name=f"forward-{self.address[1]}")

    def start(self) -> PortForward:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            upstream = connect_in(self.namespace, self.target)
        except OSError as exc:
            LOG.debug("forward to %s:%d in %s: %s", *self.target, self.namespace, exc)
            client.close()
            return
        with client, upstream:
            peers = {client: upstream, upstream: client}
            open_ends = 2
            while open_ends and not self._closed.is_set():
                readable, _, _ = select.select(list(peers), [], [], 1.0)
                for sock in readable:
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        data = b""
                    if data:
                        try:
                            peers[sock].sendall(data)
                        except OSError:
                            return
                        continue
                    # EOF: pass the half-close on, stop reading this side
                    with contextlib.suppress(OSError):
                        peers[sock].shutdown(socket.SHUT_WR)
                    del peers[sock]
                    open_ends -= 1
