"""A virtual IPMI BMC for tests, `make demo` and the QEMU lab.

`VirtualBmc` is pyghmi's BMC (IPMI 2.0 / RMCP+, cipher suite 3) in front of a pluggable
`Machine`: `InMemoryMachine` (state only: tests, `make demo`) or, in the QEMU lab,
`ironsight.lab.qemu.QemuMachine` (a QEMU process). `BmcServer` serves any number of BMCs from
one daemon thread with its own `select` loop on 127.0.0.1 UDP ports, so tests can start and
stop BMCs cleanly and can run pyghmi's *client* in the same process: the BMC sockets are kept
out of pyghmi's shared client I/O loop.

CLI: ``python -m ironsight.lab.bmc --port 6230 --user admin --password-file F [--count N]``
(or the password in $IRONSIGHT_BMC_PASSWORD; never on the command line). It prints one line
per BMC once all are listening and runs until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import select
import signal
import socket
import sys
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Protocol

import pyghmi.ipmi.bmc as pyghmi_bmc
import pyghmi.ipmi.private.serversession as serversession
import pyghmi.ipmi.private.session as ipmisession

LOG = logging.getLogger(__name__)

PASSWORD_ENV = "IRONSIGHT_BMC_PASSWORD"

# IPMI completion codes the BMC answers with
CC_OK = 0x00
CC_INVALID_DATA = 0xCC
CC_NOT_IN_PRESENT_STATE = 0xD5
CC_PARAMETER_NOT_SUPPORTED = 0x80
CC_PARAMETER_OUT_OF_RANGE = 0xC9
CC_NOT_PRESENT = 0xCB

# RMCP+ status code "no matching cipher suite" (IPMI 2.0 table 13-15)
RMCP_NO_MATCHING_CIPHER_SUITE = 0x11

# Storage commands of FRU inventory device 0 (IPMI 2.0 section 34)
NETFN_STORAGE = 0x0A
CMD_GET_FRU_INVENTORY_AREA_INFO = 0x10
CMD_READ_FRU_DATA = 0x11

# Boot device selector of the boot flags parameter (IPMI 2.0 table 28-14, bits 5:2 of data 2)
BOOT_SELECTORS: dict[int, str] = {
    0x0: "default",
    0x1: "network",
    0x2: "hd",
    0x3: "safe",
    0x5: "optical",
    0x6: "setup",
    0xF: "floppy",
}
BOOT_DEVICES: dict[str, int] = {name: sel for sel, name in BOOT_SELECTORS.items()}

BOOT_FLAG_VALID = 0x80
BOOT_FLAG_PERSISTENT = 0x40
BOOT_FLAG_EFI = 0x20


class MachineError(Exception):
    """The machine cannot do this in its present state (the BMC answers 0xD5)."""


@dataclass(frozen=True)
class BootDevice:
    """A boot device override: one of BOOT_DEVICES, for the next boot or all of them."""

    device: str = "default"
    persistent: bool = False

    def describe(self) -> str:
        """How a machine's `history` records this override."""
        return f"boot device {self.device}" + (" persistent" if self.persistent else "")


class Machine(Protocol):
    """What a BMC controls. Calls come from the BMC's server thread and must not block long."""

    def is_powered_on(self) -> bool: ...

    def power_on(self) -> None: ...

    def power_off(self) -> None: ...

    def power_reset(self) -> None: ...

    def power_shutdown(self) -> None: ...

    def get_boot_device(self) -> BootDevice: ...

    def set_boot_device(self, boot: BootDevice) -> None: ...


class InMemoryMachine:
    """A machine that is only state: power changes are instant.

    `history` records every action that reached it, so a test can tell that a power-on or a
    reset really went through the BMC (and not only that the state happens to match).
    """

    def __init__(self, name: str = "machine", powered_on: bool = False,
                 boot: BootDevice | None = None) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._on = powered_on
        self._boot = boot or BootDevice()
        self.history: list[str] = []

    @property
    def power_state(self) -> str:
        """'on' or 'off'."""
        return "on" if self.is_powered_on() else "off"

    @property
    def boot_device(self) -> BootDevice:
        return self.get_boot_device()

    def is_powered_on(self) -> bool:
        with self._lock:
            return self._on

    def power_on(self) -> None:
        self._set_power(True, "power on")

    def power_off(self) -> None:
        self._set_power(False, "power off")

    def power_shutdown(self) -> None:
        self._set_power(False, "shutdown")

    def power_reset(self) -> None:
        with self._lock:
            if not self._on:
                raise MachineError("cannot reset a machine that is off")
            self.history.append("reset")

    def get_boot_device(self) -> BootDevice:
        with self._lock:
            return self._boot

    def set_boot_device(self, boot: BootDevice) -> None:
        with self._lock:
            self._boot = boot
            self.history.append(boot.describe())

    def _set_power(self, on: bool, action: str) -> None:
        with self._lock:
            self._on = on
            self.history.append(action)


class _VirtualServerSession(serversession.ServerSession):
    """pyghmi's server session with the two fixes a long-running BMC needs."""

    def create_open_session_response(self, request: Any) -> bytearray:
        """Refuse any cipher suite but 3 instead of silently 'accepting' it.

        pyghmi's BMC only implements suite 3 (RAKP-HMAC-SHA1, HMAC-SHA1-96, AES-CBC-128) but
        answers success to any proposal; pyghmi's client proposes suite 17 first and then
        fails in RAKP2. With 'no matching cipher suite' it falls back to suite 3 by itself.
        """
        request = bytearray(request)
        if len(request) >= 32:
            proposal = (request[12] & 0x3F, request[20] & 0x3F, request[28] & 0x3F)
            if proposal != (1, 1, 1):
                return (bytearray([request[0], RMCP_NO_MATCHING_CIPHER_SUITE, 0, 0])
                        + request[4:8])
        response: bytearray = super().create_open_session_response(request)
        return response

    def close_server_session(self) -> None:
        """Forget the session at logout, so that sessions do not pile up in a long run."""
        _forget_session(self.sockaddr, self.bmc.port, self)


def _pyghmi_socket_lock() -> Any:
    """The lock pyghmi's client sessions hold while they change its socket list."""
    if ipmisession.Session.socketchecking is None:
        ipmisession.Session.socketchecking = threading.Lock()
    return ipmisession.Session.socketchecking


def _forget_session(sockaddr: Any, port: int, session: Any) -> None:
    sessions = ipmisession.Session.bmc_handlers.get(sockaddr)
    if sessions is not None and sessions.get(port) is session:
        del sessions[port]
        if not sessions:
            ipmisession.Session.bmc_handlers.pop(sockaddr, None)


def fru_image(serial: str, manufacturer: str = "ironsight",
              product: str = "virtual machine") -> bytes:
    """A FRU inventory (Platform Management FRU Information Storage Definition 1.0) with
    only a product info area: manufacturer, product name and serial number."""

    def field(text: str) -> bytes:  # type/length byte: 8-bit ASCII + Latin-1 (0b11)
        encoded = text.encode("latin-1", "replace")[:63]
        return bytes([0xC0 | len(encoded)]) + encoded

    fields = (field(manufacturer) + field(product) + field("") + field("") + field(serial)
              + field("") + field("") + b"\xc1")
    length = -(-(3 + len(fields) + 1) // 8) * 8  # a multiple of 8, with the checksum
    area = bytes([0x01, length // 8, 0x00]) + fields  # version, length, English
    area += bytes(length - len(area) - 1)
    area += bytes([-sum(area) & 0xFF])
    header = bytes([0x01, 0, 0, 0, 1, 0, 0])  # the product area right after the header
    return header + bytes([-sum(header) & 0xFF]) + area


class VirtualBmc(pyghmi_bmc.Bmc):
    """One BMC on one UDP port, driving one `Machine`.

    Port 0 picks a free port (see `port` afterwards), which keeps parallel tests race-free.
    `system_uuid` is what Get System GUID answers (default: one derived from the name);
    `serial`, when given, is the product serial number of FRU 0, as a real BMC reports the
    system serial: what discovery compares with the machine's own (discoverd/bmc_probe.py).
    """

    def __init__(self, machine: Machine, username: str, password: str, *,
                 address: str = "127.0.0.1", port: int = 0, name: str | None = None,
                 system_uuid: uuid.UUID | str | None = None,
                 serial: str | None = None) -> None:
        with _pyghmi_socket_lock():
            # pyghmi wakes its client I/O thread through the first socket it ever opened, so
            # that one must stay a client socket: open it before our server socket.
            if not ipmisession.iosockets:
                ipmisession.Session._assignsocket()
            super().__init__({username: password}, port=port, address=address)
            # pyghmi put the socket into its shared client I/O loop; BmcServer serves it.
            with contextlib.suppress(ValueError):
                ipmisession.iosockets.remove(self.serversocket)
        self.port: int = self.serversocket.getsockname()[1]
        self.address = address
        self.username = username
        self.machine = machine
        self.name = name or f"bmc-{self.port}"
        self.uuid = (uuid.UUID(str(system_uuid)) if system_uuid is not None
                     else uuid.uuid5(uuid.NAMESPACE_URL, f"ironsight-bmc:{self.name}"))
        self.serial = serial
        self._fru = fru_image(serial) if serial is not None else None

    # --- packet routing (what pyghmi's I/O loop would do for this socket) --------------

    def handle_datagram(self, data: bytes, sockaddr: Any) -> None:
        sessions = ipmisession.Session.bmc_handlers.get(sockaddr)
        session = sessions.get(self.port) if sessions else None
        if session is not None:
            session.pktqueue.append((data, sockaddr, self.serversocket, True))
            session.process_pktqueue()
        else:
            self.sessionless_data(data, sockaddr)

    def sessionless_data(self, data: Any, sockaddr: Any) -> None:
        data = bytearray(data)
        is_open_session_request = (len(data) >= 22 and data[0] == 6
                                   and data[2:4] == b"\xff\x07" and data[4] == 6
                                   and data[5] == 16)
        if is_open_session_request:
            _VirtualServerSession(self.authdata, self.kg, sockaddr, self.serversocket,
                                  data[16:], self.uuid, bmc=self)
            return
        super().sessionless_data(data, sockaddr)

    def close(self) -> None:
        """Close the socket and drop every session of this BMC from pyghmi's tables."""
        handlers = ipmisession.Session.bmc_handlers
        for sockaddr, sessions in list(handlers.items()):
            session = sessions.get(self.port) if isinstance(sessions, dict) else None
            if session is not None and getattr(session, "bmc", None) is self:
                _forget_session(sockaddr, self.port, session)
        handlers.pop(self.serversocket, None)
        self.serversocket.close()

    # --- chassis ---------------------------------------------------------------------------

    def get_power_state(self) -> str:
        return "on" if self.machine.is_powered_on() else "off"

    def is_active(self) -> bool:
        return self.machine.is_powered_on()

    def power_on(self) -> int:
        return self._power("power on", self.machine.power_on)

    def power_off(self) -> int:
        return self._power("power off", self.machine.power_off)

    def power_shutdown(self) -> int:
        return self._power("soft power off", self.machine.power_shutdown)

    def power_reset(self) -> int:
        return self._power("reset", self.machine.power_reset)

    def power_cycle(self) -> int:
        if self.machine.is_powered_on():
            rc = self._power("power off", self.machine.power_off)
            if rc != CC_OK:
                return rc
        return self._power("power on", self.machine.power_on)

    def cold_reset(self) -> int:
        return CC_OK

    def get_system_guid(self) -> uuid.UUID:
        """pyghmi sends it in SMBIOS byte order (`bytes_le`), as most BMCs do."""
        return self.uuid

    # --- FRU 0 (only with a serial; without, storage commands stay unsupported) --------------

    def handle_raw_request(self, request: Any, session: Any) -> None:
        if request["netfn"] == NETFN_STORAGE and self._fru is not None:
            if request["command"] == CMD_GET_FRU_INVENTORY_AREA_INFO:
                self._fru_area_info(request["data"], session, self._fru)
                return
            if request["command"] == CMD_READ_FRU_DATA:
                self._read_fru(request["data"], session, self._fru)
                return
        super().handle_raw_request(request, session)

    @staticmethod
    def _fru_area_info(data: Any, session: Any, fru: bytes) -> None:
        if len(data) < 1 or data[0] != 0:
            session.send_ipmi_response(code=CC_NOT_PRESENT)
            return
        session.send_ipmi_response(data=[len(fru) & 0xFF, len(fru) >> 8, 0])  # byte access

    @staticmethod
    def _read_fru(data: Any, session: Any, fru: bytes) -> None:
        if len(data) < 4:
            session.send_ipmi_response(code=CC_INVALID_DATA)
            return
        if data[0] != 0:
            session.send_ipmi_response(code=CC_NOT_PRESENT)
            return
        offset = data[1] | data[2] << 8
        if offset >= len(fru):
            session.send_ipmi_response(code=CC_PARAMETER_OUT_OF_RANGE)
            return
        chunk = fru[offset:offset + data[3]]
        session.send_ipmi_response(data=[len(chunk), *chunk])

    def _power(self, action: str, call: Any) -> int:
        try:
            call()
        except MachineError as exc:
            LOG.warning("%s: %s refused: %s", self.name, action, exc)
            return CC_NOT_IN_PRESENT_STATE
        LOG.info("%s: %s", self.name, action)
        return CC_OK

    # --- boot flags (parameter 5), with the persistent bit pyghmi's BMC drops ----------------

    def get_system_boot_options(self, request: Any, session: Any) -> None:
        if request["data"][0] != 5:
            session.send_ipmi_response(code=CC_PARAMETER_NOT_SUPPORTED)
            return
        boot = self.machine.get_boot_device()
        flags = 0 if boot.device == "default" else BOOT_FLAG_VALID
        if boot.persistent and flags:
            flags |= BOOT_FLAG_PERSISTENT
        selector = BOOT_DEVICES.get(boot.device, 0)
        session.send_ipmi_response(data=[1, 5, flags, selector << 2, 0, 0, 0])

    def set_system_boot_options(self, request: Any, session: Any) -> None:
        data = request["data"]
        if data[0] != 5:
            # timers and acknowledge flags (params 0, 3, 4 and others): accepted, not modelled
            session.send_ipmi_response()
            return
        if len(data) < 3:
            session.send_ipmi_response(code=CC_INVALID_DATA)
            return
        flags, selector = data[1], (data[2] >> 2) & 0xF
        device = BOOT_SELECTORS.get(selector) if flags & BOOT_FLAG_VALID else "default"
        if device is None:
            session.send_ipmi_response(code=CC_INVALID_DATA)
            return
        persistent = bool(flags & BOOT_FLAG_PERSISTENT) and device != "default"
        self.machine.set_boot_device(BootDevice(device, persistent))
        LOG.info("%s: boot device %s%s", self.name, device, " (persistent)" if persistent else "")
        session.send_ipmi_response()


class BmcServer:
    """Serves BMCs from one daemon thread until `stop()`; also a context manager."""

    def __init__(self, bmcs: Sequence[VirtualBmc]) -> None:
        self.bmcs = list(bmcs)
        self._by_socket = {bmc.serversocket: bmc for bmc in self.bmcs}
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def in_memory(cls, count: int, username: str, password: str, *,
                  address: str = "127.0.0.1", port: int = 0) -> BmcServer:
        """`count` BMCs with fresh in-memory machines on ports port..port+count-1
        (port 0: each on a free port)."""
        bmcs: list[VirtualBmc] = []
        try:
            for index in range(count):
                machine = InMemoryMachine(name=f"machine-{index}")
                bmcs.append(VirtualBmc(machine, username, password, address=address,
                                       port=port + index if port else 0))
        except OSError:
            for bmc in bmcs:
                bmc.close()
            raise
        return cls(bmcs)

    def start(self) -> BmcServer:
        self._thread = threading.Thread(target=self._serve, name="virtual-bmc", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        if self._thread is not None:
            self._thread.join(timeout)
        for bmc in self.bmcs:
            bmc.close()
        self._wake_r.close()
        self._wake_w.close()

    def __enter__(self) -> BmcServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _serve(self) -> None:
        sockets: list[socket.socket] = [self._wake_r, *self._by_socket]
        while not self._stopping.is_set():
            readable, _, _ = select.select(sockets, [], [], 1.0)
            for sock in readable:
                if sock is self._wake_r:
                    continue
                try:
                    data, sockaddr = sock.recvfrom(3000, socket.MSG_DONTWAIT)
                except OSError:
                    continue
                bmc = self._by_socket[sock]
                try:
                    bmc.handle_datagram(data, sockaddr)
                except Exception:  # one bad packet must not stop the BMCs
                    LOG.exception("%s: error handling a packet from %s", bmc.name, sockaddr)


# --- CLI ---------------------------------------------------------------------------------------


def _read_password(password_file: str | None) -> str:
    if password_file:
        return Path(password_file).read_text(encoding="utf-8").rstrip("\r\n")
    password = os.environ.get(PASSWORD_ENV)
    if not password:
        raise SystemExit(f"no password: use --password-file or set ${PASSWORD_ENV}")
    return password


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m ironsight.lab.bmc",
        description="Virtual IPMI BMCs with in-memory machines, on consecutive UDP ports.")
    parser.add_argument("--address", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=6230, help="UDP port of the first BMC")
    parser.add_argument("--count", type=_positive, default=1, metavar="N",
                        help="number of BMCs")
    parser.add_argument("--user", default="admin", help="IPMI user name")
    parser.add_argument("--password-file",
                        help=f"file holding the IPMI password (default: ${PASSWORD_ENV})")
    parser.add_argument("--debug", action="store_true", help="log every power action")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    password = _read_password(args.password_file)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        server = BmcServer.in_memory(args.count, args.user, password, address=args.address,
                                     port=args.port)
    except OSError as exc:
        raise SystemExit(f"cannot listen on {args.address} UDP ports {args.port}.."
                         f"{args.port + args.count - 1}: {exc.strerror}") from None
    with server:
        for index, bmc in enumerate(server.bmcs):
            print(f"bmc {index} listening on {bmc.address}:{bmc.port} user {args.user}",
                  flush=True)
        while not stop.wait(1.0):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
