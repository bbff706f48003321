"""A read-only TFTP server (RFC 1350; options, blksize, tsize and timeout: RFCs 2347-2349) for
the UEFI boot chain, shim -> GRUB -> kernel: Debian's signed GRUB can fetch over TFTP only.

Ours rather than dnsmasq's TFTP because every name goes through one resolver (a node's GRUB
config is made per request and carries a token only for the address holding the node's lease)
and every transfer is reported to `on_done`, for the node's boot timeline.

It runs in discoverd's event loop. Each transfer is a task with its own UDP socket (its own
TID) connected to the client, so the kernel drops strangers' packets and an ICMP "port
unreachable" ends a transfer whose client went away. Once the file is open, ACKs are handled
in the socket's reader callback: a block costs one pread into the packet and one send, with
no future or timer per block (the one retransmission timer re-arms itself only when it
fires). A file on disk is read through the descriptor opened when the transfer starts, so
one replaced by rename meanwhile is still served whole and consistent.

Every read request (valid or not, refused as busy or served) ends with exactly one `on_done`
call; write requests and malformed packets are answered but are not transfers.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import stat
import struct
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG = logging.getLogger(__name__)

RRQ, WRQ, DATA, ACK, ERROR, OACK = 1, 2, 3, 4, 5, 6
NOT_DEFINED, NOT_FOUND, ACCESS_VIOLATION, ILLEGAL_OPERATION = 0, 1, 2, 4
DEFAULT_BLKSIZE = 512
MIN_BLKSIZE, MAX_BLKSIZE = 8, 65464  # RFC 2348
MAX_NAME = 255
_MODES = ("octet", "netascii")
_MAX_REQUEST = 2048  # an RRQ with its options fits in 512 bytes (RFC 2347)
_BURST = 64  # requests read per wake-up, so that a flood cannot starve running transfers
_BUSY_LOG_EVERY = 60.0

SockAddr = tuple[Any, ...]


class TftpRefused(Exception):
    """Raised by a resolver: answered with TFTP error 2 (access violation) and this message."""


@dataclass(frozen=True)
class TftpFile:
    """What a read request gets: bytes made for this request, or a file on disk."""

    data: bytes | None = None
    # Opened when the transfer starts: fstat gives its size, and the open descriptor keeps a
    # file replaced by rename consistent for the whole transfer.
    path: Path | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.path is None):
            raise ValueError("a TftpFile has exactly one of data and path")


# (normalised file name, client address) -> the file, None (error 1 "File not found"), or
# raise TftpRefused (error 2 with its message).
Resolver = Callable[[str, str], Awaitable[TftpFile | None]]


@dataclass(frozen=True)
class Transfer:
    """One finished transfer, reported to `on_done` (successful or not)."""

    host: str
    port: int
    filename: str  # as the resolver saw it (as sent, when it was refused before that)
    size: int | None  # bytes on the wire (after netascii translation); None: never known
    sent: int  # bytes the client acknowledged: `size` when complete
    seconds: float  # from the request to the end
    blksize: int
    error: str | None  # None: complete


class TftpServer:
    def __init__(self, resolve: Resolver, *, on_done: Callable[[Transfer], None] | None = None,
                 timeout: float = 1.0, retries: int = 5, max_transfers: int = 200,
                 max_blksize: int = 1468,
                 socket_factory: Callable[[int], socket.socket] | None = None) -> None:
        """`max_blksize` 1468 fills a 1500-byte Ethernet frame (IPv4). `socket_factory(family)`
        makes every UDP socket, listeners and transfers' (discoverd's creates them inside the
        provisioning network's namespace)."""
        self.resolve = resolve
        self.on_done = on_done
        self.timeout = timeout
        self.retries = retries
        self.max_transfers = max_transfers
        self.max_blksize = max(MIN_BLKSIZE, min(max_blksize, MAX_BLKSIZE))
        self.socket_factory = socket_factory or _udp_socket
        self._listeners: list[_Listener] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._by_client: dict[SockAddr, _Transfer] = {}
        self._busy_logged = float("-inf")

    @property
    def bound(self) -> list[tuple[str, int]]:
        return [(listener.address, listener.local[1]) for listener in self._listeners]

    @property
    def active(self) -> int:
        return len(self._tasks)

    async def start(self, addresses: Sequence[str], port: int = 69) -> None:
        """Listen on each address (an IPv4 or IPv6 literal); all of them or none."""
        loop = asyncio.get_running_loop()
        listeners: list[_Listener] = []
        try:
            for address in addresses:
                listeners.append(self._listen(address, port))
        except BaseException:
            for listener in listeners:
                listener.sock.close()
            raise
        for listener in listeners:
            loop.add_reader(listener.sock.fileno(), self._on_requests, listener)
        self._listeners.extend(listeners)
        LOG.debug("TFTP listening on %s", ", ".join(f"{a} port {p}" for a, p in self.bound))

    async def stop(self) -> None:
        """Close the listeners and abort running transfers (each one is reported)."""
        loop = asyncio.get_running_loop()
        for listener in self._listeners:
            loop.remove_reader(listener.sock.fileno())
            listener.sock.close()
        self._listeners.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _listen(self, address: str, port: int) -> _Listener:
        where = f"{address} port {port}"
        try:
            family, _, _, _, sockaddr = socket.getaddrinfo(
                address, port, type=socket.SOCK_DGRAM, flags=socket.AI_NUMERICHOST)[0]
        except socket.gaierror as exc:
            raise OSError(f"TFTP cannot listen on {where}: not an IP address") from exc
        try:
            sock = self.socket_factory(family)
        except OSError as exc:
            raise OSError(exc.errno, f"TFTP cannot listen on {where}: {exc.strerror}") from exc
        try:
            sock.setblocking(False)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(sockaddr)
            local = sock.getsockname()
        except OSError as exc:
            sock.close()
            raise OSError(exc.errno, f"TFTP cannot listen on {where}: {exc.strerror}") from exc
        return _Listener(address, sock, local)

    # --- requests, on a listener -------------------------------------------------------

    def _on_requests(self, listener: _Listener) -> None:
        for _ in range(_BURST):
            try:
                packet, client = listener.sock.recvfrom(_MAX_REQUEST)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                LOG.debug("TFTP listener on %s: %s", listener.address, exc)
                return
            self._request(listener, packet, client)

    def _request(self, listener: _Listener, packet: bytes, client: SockAddr) -> None:
        opcode = int.from_bytes(packet[:2], "big") if len(packet) >= 4 else 0
        if opcode == ERROR:
            return  # never answer an error with one
        if opcode == WRQ:
            LOG.debug("TFTP write request from %s refused", client[0])
            _send(listener.sock, _error(ACCESS_VIOLATION, "writes are not accepted"), client)
            return
        if opcode != RRQ:
            _send(listener.sock, _error(ILLEGAL_OPERATION, f"illegal operation {opcode}"),
                  client)
            return
        try:
            raw_name, mode, options = _parse_request(packet)
        except ValueError as exc:
            LOG.debug("TFTP malformed request from %s: %s", client[0], exc)
            _send(listener.sock, _error(ILLEGAL_OPERATION, f"malformed request: {exc}"), client)
            return
        running = self._by_client.get(client)
        if running is not None:
            running.poll()  # an ERROR it has not read yet (UEFI's abort) ends it now
            if not running.finished:
                LOG.debug("TFTP repeated request from %s port %d ignored: its transfer runs",
                          client[0], client[1])
                return
        loop = asyncio.get_running_loop()
        transfer = _Transfer(self, listener, client, raw_name, mode, options, loop)
        if len(self._tasks) >= self.max_transfers:
            if loop.time() - self._busy_logged >= _BUSY_LOG_EVERY:
                self._busy_logged = loop.time()
                LOG.warning("TFTP refusing requests: %d transfers are running (max_transfers)",
                            len(self._tasks))
            _send(listener.sock, _error(NOT_DEFINED, "busy: too many transfers"), client)
            self._report(transfer, "busy: too many transfers")
            return
        self._by_client[client] = transfer
        task = loop.create_task(self._serve(transfer), name=f"tftp-{client[0]}-{client[1]}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, transfer: _Transfer) -> None:
        error: str | None = "internal error"
        try:
            error = await transfer.run()
        except asyncio.CancelledError:
            error = "aborted: the TFTP server stopped"
            transfer.send_error(NOT_DEFINED, "server shutting down")
            raise
        except Exception as exc:
            LOG.exception("TFTP transfer of %r to %s failed", transfer.filename, transfer.host)
            error = f"internal error: {exc}"
            transfer.send_error(NOT_DEFINED, "internal error")
        finally:
            transfer.close()
            if self._by_client.get(transfer.client) is transfer:
                del self._by_client[transfer.client]
            self._report(transfer, error)

    def _report(self, transfer: _Transfer, error: str | None) -> None:
        done = transfer.report(error)
        LOG.debug("TFTP %r to %s port %d: %s, %d of %s bytes in %.3f s (blksize %d)",
                  done.filename, done.host, done.port, error or "complete", done.sent,
                  "?" if done.size is None else done.size, done.seconds, done.blksize)
        if self.on_done is not None:
            try:
                self.on_done(done)
            except Exception:
                LOG.exception("TFTP on_done failed for %r to %s", done.filename, done.host)


@dataclass
class _Listener:
    address: str  # as given to start()
    sock: socket.socket
    local: SockAddr  # what it is bound to; transfers bind the same address, port 0

    @property
    def transfer_address(self) -> SockAddr:
        return (self.local[0], 0, *self.local[2:])


class _Transfer:
    """One read request, from the resolver to the last ACK."""

    def __init__(self, server: TftpServer, listener: _Listener, client: SockAddr,
                 raw_name: bytes, mode: str, options: dict[str, str],
                 loop: asyncio.AbstractEventLoop) -> None:
        self.server = server
        self.listener = listener
        self.client = client
        self.host, self.port = str(client[0]), int(client[1])
        self.raw_name = raw_name
        self.filename = raw_name.decode("utf-8", "replace")
        self.mode = mode
        self.options = options
        self.loop = loop
        self.began = loop.time()
        self.timeout = server.timeout
        self.blksize = DEFAULT_BLKSIZE
        self.size: int | None = None
        self.sock: socket.socket | None = None
        self.fd: int | None = None  # the file on disk, or
        self.data: memoryview | None = None  # the bytes to send
        self.block = 0  # the block awaiting its ACK; 0: the OACK
        self.last_block = 0
        self.tries = 0
        self.sent_at = 0.0
        self.packet: bytes | memoryview = b""
        self.buffer = memoryview(b"")  # the DATA packet, reused for every block
        self.payloads = [memoryview(b"")]
        self.received = bytearray(1024)
        self.done: asyncio.Future[str | None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.reading = False

    @property
    def finished(self) -> bool:
        return self.done is not None and self.done.done()

    async def run(self) -> str | None:
        """None when the client has every block, else what went wrong."""
        try:
            self.sock = self._connect()
        except OSError as exc:  # out of descriptors, say
            LOG.warning("TFTP request from %s for %r not served: no socket: %s", self.host,
                        self.filename, exc)
            return self._refuse(NOT_DEFINED, "server error", f"no socket: {exc}")
        name = _normalise(self.raw_name)
        if name is None:
            return self._refuse(NOT_FOUND, "File not found", "not served: invalid name")
        self.filename = name
        try:
            found = await self.server.resolve(name, self.host)
        except TftpRefused as exc:
            return self._refuse(ACCESS_VIOLATION, str(exc), f"refused: {exc}")
        if found is None:
            return self._refuse(NOT_FOUND, "File not found", "not found")
        try:
            self._open(found)
        except OSError as exc:  # the resolver named a file we cannot serve: misconfigured
            LOG.warning("TFTP %r for %s not served: %s", name, self.host, exc)
            if isinstance(exc, PermissionError):
                return self._refuse(ACCESS_VIOLATION, "Access violation", f"cannot read: {exc}")
            return self._refuse(NOT_FOUND, "File not found", f"cannot read: {exc}")
        oack = self._negotiate()
        assert self.size is not None
        self.last_block = self.size // self.blksize + 1
        packet = bytearray(4 + self.blksize)
        packet[1] = DATA
        self.buffer = memoryview(packet)
        self.payloads = [self.buffer[4:]]  # what preadv reads into
        self.done = self.loop.create_future()
        self.loop.add_reader(self.sock.fileno(), self._readable)
        self.reading = True
        if oack is None:
            self.block = 1
            self._load_block()
        else:
            self.packet = oack
        if not self.done.done():
            self._send()
        if not self.done.done():
            self.timer = self.loop.call_at(self.sent_at + self.timeout, self._expired)
        return await self.done

    def _connect(self) -> socket.socket:
        sock = self.server.socket_factory(self.listener.sock.family)
        try:
            sock.setblocking(False)
            sock.bind(self.listener.transfer_address)
            sock.connect(self.client)
        except BaseException:
            sock.close()
            raise
        return sock

    def _refuse(self, code: int, message: str, error: str) -> str:
        self.send_error(code, message)
        return error

    def _open(self, found: TftpFile) -> None:
        data = found.data
        if found.path is not None:
            # O_NONBLOCK: a FIFO must not hang the loop (it is refused below, like a directory)
            fd = os.open(found.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise IsADirectoryError(f"{found.path} is not a regular file")
                if self.mode == "netascii":  # text files: small, translated whole
                    data = os.pread(fd, st.st_size, 0)
                else:
                    self.fd, fd, self.size = fd, -1, st.st_size
            finally:
                if fd >= 0:
                    os.close(fd)
        if data is not None:
            if self.mode == "netascii":
                data = _netascii(data)
            self.data, self.size = memoryview(data), len(data)

    def _negotiate(self) -> bytes | None:
        """The OACK for the options taken (RFC 2347), or None: DATA 1 comes straight."""
        answer: list[str] = []
        for name, value in self.options.items():
            number = int(value) if value.isascii() and value.isdigit() else None
            if number is None:
                continue
            if name == "blksize" and MIN_BLKSIZE <= number <= MAX_BLKSIZE:
                self.blksize = min(number, self.server.max_blksize)
                answer += [name, str(self.blksize)]
            elif name == "tsize":
                answer += [name, str(self.size)]
            elif name == "timeout" and 1 <= number <= 255:
                self.timeout = float(number)
                answer += [name, value]
        if not answer:
            return None
        return struct.pack("!H", OACK) + "".join(f"{item}\0" for item in answer).encode()

    # --- lock-step sending, driven by the socket's reader callback ----------------------

    def _load_block(self) -> None:
        """Block `self.block` into the packet: read straight into it from the file."""
        offset = (self.block - 1) * self.blksize
        assert self.size is not None
        length = min(self.blksize, self.size - offset)
        if self.fd is not None:
            got = os.preadv(self.fd, self.payloads, offset)
            if got < length:  # truncated in place (a rename would not show here)
                self.send_error(NOT_DEFINED, "file changed during the transfer")
                self._finish(f"the file shrank during the transfer, at byte {offset + got}")
                return
        else:
            assert self.data is not None
            self.payloads[0][:length] = self.data[offset:offset + length]
        self.buffer[2] = (self.block >> 8) & 0xFF  # block numbers roll over 65535 -> 0
        self.buffer[3] = self.block & 0xFF
        self.packet = self.buffer[:4 + length]

    def _send(self) -> None:
        assert self.sock is not None
        try:
            self.sock.send(self.packet)
        except (BlockingIOError, InterruptedError):
            pass  # as if lost on the way: sent again on timeout
        except OSError as exc:  # ECONNREFUSED: an ICMP "port unreachable" from the client
            self._finish(f"client unreachable: {exc.strerror}")
        self.sent_at = self.loop.time()

    def _readable(self) -> None:
        sock, received, done = self.sock, self.received, self.done
        assert sock is not None and done is not None
        while not done.done():
            try:
                length = sock.recv_into(received)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self._finish(f"client unreachable: {exc.strerror}")
                return
            if length < 4 or received[0] != 0:
                continue  # not TFTP: ignored
            if received[1] == ACK:
                if (received[2] << 8 | received[3]) == self.block & 0xFFFF:
                    self._acked()
                # Else a duplicate of the previous ACK (or a stray one): nothing is sent again,
                # or every later block would go twice (the Sorcerer's Apprentice bug).
            elif received[1] == ERROR:
                code = received[2] << 8 | received[3]
                message = bytes(received[4:length]).split(b"\0")[0].decode("utf-8", "replace")
                # UEFI asks tsize, aborts with error 8, then asks again: normal, quiet.
                self._finish(f"client aborted: error {code} {message!r}")

    def poll(self) -> None:
        """Read what the client sent already (before a new request from it is looked at)."""
        if self.done is not None and not self.done.done():
            self._readable()

    def _acked(self) -> None:
        if self.block == self.last_block:
            self._finish(None)
            return
        self.block += 1
        self.tries = 0
        self._load_block()
        if self.done is not None and not self.done.done():
            self._send()

    def _expired(self) -> None:
        self.timer = None
        if self.done is None or self.done.done():
            return
        due = self.sent_at + self.timeout
        if self.loop.time() < due:  # ACKs came meanwhile: the packet now out is newer
            self.timer = self.loop.call_at(due, self._expired)
            return
        if self.tries >= self.server.retries:
            what = "the option acknowledgement" if self.block == 0 else f"block {self.block}"
            LOG.info("TFTP transfer of %r to %s port %d given up: no answer to %s after %d "
                     "retransmissions, %.0f s apart", self.filename, self.host, self.port,
                     what, self.tries, self.timeout)
            self._finish(f"timed out: no answer to {what} after {self.tries} retransmissions")
            return
        self.tries += 1
        self._send()
        if not self.done.done():
            self.timer = self.loop.call_at(self.sent_at + self.timeout, self._expired)

    def _finish(self, error: str | None) -> None:
        if self.done is None or self.done.done():
            return
        self.done.set_result(error)
        self._quiet()

    def _quiet(self) -> None:
        """No more callbacks: the task resumes only on the next turn of the loop."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.reading and self.sock is not None:
            self.loop.remove_reader(self.sock.fileno())
            self.reading = False

    # --- the end -------------------------------------------------------------------------

    def send_error(self, code: int, message: str) -> None:
        if self.sock is not None:
            _send(self.sock, _error(code, message), None)
        else:
            _send(self.listener.sock, _error(code, message), self.client)

    def close(self) -> None:
        self._quiet()
        if self.sock is not None:
            self.sock.close()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def report(self, error: str | None) -> Transfer:
        if error is None:
            sent = self.size or 0
        else:
            acked = max(self.block - 1, 0)
            sent = min(acked * self.blksize, self.size or 0)
        return Transfer(host=self.host, port=self.port, filename=self.filename,
                        size=self.size, sent=sent, seconds=self.loop.time() - self.began,
                        blksize=self.blksize, error=error)


# --- packets and names ------------------------------------------------------------------------

def _udp_socket(family: int) -> socket.socket:
    return socket.socket(family, socket.SOCK_DGRAM)


def _send(sock: socket.socket, packet: bytes, to: SockAddr | None) -> None:
    """Best effort: a lost error packet is the client's timeout, nothing more."""
    try:
        if to is None:
            sock.send(packet)
        else:
            sock.sendto(packet, to)
    except OSError as exc:
        LOG.debug("TFTP error packet not sent: %s", exc)


def _error(code: int, message: str) -> bytes:
    return struct.pack("!HH", ERROR, code) + message.encode("utf-8", "replace")[:500] + b"\0"


def _parse_request(packet: bytes) -> tuple[bytes, str, dict[str, str]]:
    """(file name as sent, mode, options by lower-case name) of an RRQ."""
    if not packet.endswith(b"\0"):
        raise ValueError("its last field does not end with a NUL")
    fields = packet[2:-1].split(b"\0")
    if len(fields) < 2:
        raise ValueError("no transfer mode")
    mode = fields[1].decode("latin-1").lower()
    if mode not in _MODES:
        raise ValueError(f"unsupported transfer mode {mode!r}")
    # An unpaired last field (padding some PXE ROMs add) is ignored.
    options = {key.decode("latin-1").lower(): value.decode("latin-1")
               for key, value in zip(fields[2::2], fields[3::2], strict=False)}
    return fields[0], mode, options


def _normalise(raw: bytes) -> str | None:
    """The name the resolver sees ("grub/grub.cfg"), or None: not served. Some PXE ROMs send
    backslashes; a ".." anywhere is refused rather than resolved."""
    if len(raw) > MAX_NAME or b"\0" in raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    parts = [part for part in text.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _netascii(data: bytes) -> bytes:
    """Line ends LF -> CR LF; any other CR -> CR NUL (RFC 764)."""
    return data.replace(b"\r", b"\r\0").replace(b"\n", b"\r\n")
