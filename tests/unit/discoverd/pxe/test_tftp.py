"""discoverd's TFTP server (the UEFI boot chain), against a small UDP client written here: what
goes on the wire block by block, what the resolver is asked, and what every transfer reports.
A real server on 127.0.0.1 port 0, with short retransmission timeouts."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import struct
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from ironsight.discoverd.pxe.tftp import TftpFile, TftpRefused, TftpServer, Transfer

RRQ, WRQ, DATA, ACK, ERROR, OACK = 1, 2, 3, 4, 5, 6
WAIT = 2.0  # the longest a test waits for a packet that should come


def request(name: str | bytes, mode: str = "octet", opcode: int = RRQ,
            **options: int | str) -> bytes:
    fields = [name.encode() if isinstance(name, str) else name, mode.encode()]
    for key, value in options.items():
        fields += [key.encode(), str(value).encode()]
    return struct.pack("!H", opcode) + b"".join(field + b"\0" for field in fields)


def content(size: int) -> bytes:
    """Bytes whose every block differs from its neighbours (a repeated block would show)."""
    return bytes((i * 7 + i // 251) & 0xFF for i in range(size))


class Client:
    """A TFTP client on one UDP socket: requests go to the listener, everything else to the
    transfer's own port (its TID), learnt from the first packet that comes back."""

    def __init__(self, server: tuple[str, int]) -> None:
        family = socket.AF_INET6 if ":" in server[0] else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self.sock.bind((server[0], 0))
        self.server = server
        self.peer: Any = None
        self.loop = asyncio.get_running_loop()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, packet: bytes) -> None:
        self.sock.sendto(packet, self.server)

    def request(self, name: str | bytes, mode: str = "octet", opcode: int = RRQ,
                **options: int | str) -> None:
        self.peer = None
        self.send_raw(request(name, mode, opcode, **options))

    def ack(self, block: int) -> None:
        self.sock.sendto(struct.pack("!HH", ACK, block & 0xFFFF), self.peer)

    def abort(self, code: int, message: str) -> None:
        self.sock.sendto(struct.pack("!HH", ERROR, code) + message.encode() + b"\0", self.peer)

    async def receive(self, within: float = WAIT) -> tuple[int, int, bytes]:
        """(opcode, block or error code, the rest); an OACK's options are its `rest`."""
        try:
            packet, sender = self.sock.recvfrom(70000)
        except BlockingIOError:
            packet, sender = await asyncio.wait_for(
                self.loop.sock_recvfrom(self.sock, 70000), within)
        if self.peer is None:
            self.peer = sender
        assert sender == self.peer, f"a packet from {sender}, not the transfer's {self.peer}"
        opcode = int.from_bytes(packet[:2], "big")
        if opcode == OACK:
            return OACK, 0, packet[2:]
        return opcode, int.from_bytes(packet[2:4], "big"), packet[4:]

    async def data(self, block: int) -> bytes:
        opcode, number, rest = await self.receive()
        assert (opcode, number) == (DATA, block), f"expected DATA {block}: {opcode, number, rest}"
        return rest

    async def oack(self) -> dict[str, str]:
        opcode, _, rest = await self.receive()
        assert opcode == OACK, (opcode, rest)
        fields = rest.decode().split("\0")[:-1]
        return dict(zip(fields[::2], fields[1::2], strict=True))

    async def error(self) -> tuple[int, str]:
        opcode, code, rest = await self.receive()
        assert opcode == ERROR, (opcode, code, rest)
        assert rest.endswith(b"\0")
        return code, rest[:-1].decode()

    async def nothing(self, within: float) -> None:
        with pytest.raises(TimeoutError):
            await self.receive(within)

    async def get(self, name: str | bytes, mode: str = "octet", **options: int | str) -> bytes:
        """The whole file, lock-step."""
        self.request(name, mode, **options)
        opcode, number, rest = await self.receive()
        blksize = 512
        if opcode == OACK:
            fields = rest.decode().split("\0")[:-1]
            blksize = int(dict(zip(fields[::2], fields[1::2], strict=True)).get("blksize", 512))
            self.ack(0)
            opcode, number, rest = await self.receive()
        received, block = bytearray(), 1
        while True:
            assert (opcode, number) == (DATA, block & 0xFFFF), (opcode, number, rest)
            received += rest
            self.ack(block)
            if len(rest) < blksize:
                return bytes(received)
            block += 1
            opcode, number, rest = await self.receive()


class Files:
    """The resolver: names to files (or to a refusal), and every call it got."""

    def __init__(self) -> None:
        self.files: dict[str, TftpFile | str] = {}
        self.asked: list[tuple[str, str]] = []

    async def __call__(self, name: str, host: str) -> TftpFile | None:
        self.asked.append((name, host))
        found = self.files.get(name)
        if isinstance(found, str):
            raise TftpRefused(found)
        return found

    def add(self, name: str, data: bytes) -> bytes:
        self.files[name] = TftpFile(data=data)
        return data


Start = Callable[..., Awaitable[TftpServer]]


@pytest.fixture
def files() -> Files:
    return Files()


@pytest.fixture
def reports() -> list[Transfer]:
    return []


@pytest.fixture
async def start(files: Files, reports: list[Transfer]) -> AsyncIterator[Start]:
    """`await start(**TftpServer options)`: a server on 127.0.0.1 port 0 (or `addresses`),
    retransmitting after 0.1 s; stopped at the end."""
    servers: list[TftpServer] = []

    async def start_(addresses: tuple[str, ...] = ("127.0.0.1",), **kwargs: Any) -> TftpServer:
        server = TftpServer(files, on_done=reports.append, **{"timeout": 0.1, **kwargs})
        await server.start(addresses, 0)
        servers.append(server)
        return server

    yield start_
    for server in servers:
        await server.stop()


@pytest.fixture
async def server(start: Start) -> TftpServer:
    return await start()


@pytest.fixture
async def client(server: TftpServer) -> AsyncIterator[Client]:
    client = Client(server.bound[0])
    yield client
    client.close()


async def reported(reports: list[Transfer], count: int = 1) -> list[Transfer]:
    deadline = time.monotonic() + WAIT
    while len(reports) < count:
        assert time.monotonic() < deadline, f"{len(reports)} transfers reported, not {count}"
        await asyncio.sleep(0.005)
    return reports


# --- plain reads (RFC 1350) -------------------------------------------------------------------

async def test_a_plain_read_gets_512_byte_blocks_the_last_one_short(
        client: Client, files: Files, server: TftpServer) -> None:
    data = files.add("bootx64.efi", content(1300))
    client.request("bootx64.efi")
    assert await client.data(1) == data[:512]
    assert client.peer[1] != server.bound[0][1]  # the transfer has its own port (TID)
    client.ack(1)
    assert await client.data(2) == data[512:1024]
    client.ack(2)
    assert await client.data(3) == data[1024:]
    client.ack(3)
    await client.nothing(0.15)  # done: nothing more, not even a retransmission


async def test_a_size_that_is_a_multiple_of_512_ends_with_an_empty_block(
        client: Client, files: Files) -> None:
    data = files.add("grub/grub.cfg", content(1024))
    client.request("grub/grub.cfg")
    assert await client.data(1) == data[:512]
    client.ack(1)
    assert await client.data(2) == data[512:]
    client.ack(2)
    assert await client.data(3) == b""


async def test_an_empty_file_is_one_empty_block(client: Client, files: Files) -> None:
    files.add("empty", b"")
    assert await client.get("empty") == b""


async def test_a_file_on_disk_is_served(client: Client, files: Files, tmp_path: Path) -> None:
    path = tmp_path / "shimx64.efi"
    path.write_bytes(content(5000))
    files.files["shimx64.efi"] = TftpFile(path=path)
    assert await client.get("shimx64.efi") == path.read_bytes()


async def test_the_resolver_gets_the_name_and_the_client_address(client: Client,
                                                                 files: Files) -> None:
    files.add("grub/grub.cfg", b"set timeout=0\n")
    await client.get("grub/grub.cfg")
    assert files.asked == [("grub/grub.cfg", "127.0.0.1")]


# --- options (RFC 2347-2349) ------------------------------------------------------------------

async def test_blksize_and_tsize_are_answered_in_an_oack_then_data_waits_for_ack_0(
        start: Start, files: Files) -> None:
    server = await start(timeout=1.0)
    client = Client(server.bound[0])
    data = files.add("pxe/vmlinuz", content(3000))
    client.request("pxe/vmlinuz", blksize=1024, tsize=0)
    assert await client.oack() == {"blksize": "1024", "tsize": "3000"}
    await client.nothing(0.2)  # no DATA before ACK 0 (nor the OACK again: 1 s timeout)
    client.ack(0)
    assert await client.data(1) == data[:1024]
    client.ack(1)
    assert await client.data(2) == data[1024:2048]
    client.close()


async def test_blksize_is_capped_at_max_blksize(start: Start, files: Files) -> None:
    server = await start(max_blksize=1468)
    client = Client(server.bound[0])
    data = files.add("initrd", content(4000))
    client.request("initrd", blksize=65464)
    assert await client.oack() == {"blksize": "1468"}
    client.ack(0)
    assert await client.data(1) == data[:1468]
    client.close()


async def test_the_timeout_option_is_acknowledged_when_in_1_to_255(client: Client,
                                                                   files: Files) -> None:
    files.add("f", b"x")
    client.request("f", timeout=3)
    assert await client.oack() == {"timeout": "3"}
    other = Client(client.server)
    other.request("f", timeout=0)
    assert await other.data(1) == b"x"  # no OACK: nothing it could take
    other.close()


@pytest.mark.parametrize("options", [{"windowsize": 8}, {"blksize": 4}, {"blksize": "big"}])
async def test_unknown_or_invalid_options_are_ignored(client: Client, files: Files,
                                                      options: dict[str, Any]) -> None:
    files.add("f", content(600))
    client.request("f", **options)
    assert await client.data(1) == content(600)[:512]


async def test_the_uefi_pattern_tsize_then_abort_then_read_is_reported_twice(
        client: Client, files: Files, reports: list[Transfer],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="ironsight.discoverd.pxe.tftp")
    data = files.add("grubx64.efi", content(2000))
    client.request("grubx64.efi", tsize=0)
    assert await client.oack() == {"tsize": "2000"}
    client.abort(8, "no thanks, just the size")
    # the same client port asks again at once, as firmware does
    assert await client.get("grubx64.efi", blksize=1024, tsize=0) == data
    first, second = await reported(reports, 2)
    assert first.error == "client aborted: error 8 'no thanks, just the size'"
    assert (first.filename, first.sent, first.size) == ("grubx64.efi", 0, 2000)
    assert second.error is None
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]


# --- refusals ---------------------------------------------------------------------------------

async def test_a_file_the_resolver_does_not_know_is_error_1(
        client: Client, reports: list[Transfer]) -> None:
    client.request("pxelinux.cfg/default")
    assert await client.error() == (1, "File not found")
    [report] = await reported(reports)
    assert (report.filename, report.size, report.error) == ("pxelinux.cfg/default", None,
                                                            "not found")


async def test_a_path_that_is_missing_or_a_directory_is_error_1_and_a_warning(
        client: Client, files: Files, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    files.files["gone"] = TftpFile(path=tmp_path / "gone")
    files.files["dir"] = TftpFile(path=tmp_path)
    for name in ("gone", "dir"):
        other = Client(client.server)
        other.request(name)
        assert await other.error() == (1, "File not found")
        other.close()
    # the resolver named them: a configuration problem, for the operator to see
    assert [r.levelname for r in caplog.records] == ["WARNING", "WARNING"]


async def test_a_refusal_by_the_resolver_is_error_2_with_its_message(
        client: Client, files: Files, reports: list[Transfer]) -> None:
    files.files["grub/grub.cfg-52:54:00:12:34:56"] = "not the address of the node's lease"
    client.request("grub/grub.cfg-52:54:00:12:34:56")
    assert await client.error() == (2, "not the address of the node's lease")
    [report] = await reported(reports)
    assert report.error == "refused: not the address of the node's lease"


async def test_write_requests_are_refused(client: Client, files: Files,
                                          reports: list[Transfer]) -> None:
    client.request("bootx64.efi", opcode=WRQ)
    assert await client.error() == (2, "writes are not accepted")
    assert files.asked == []
    assert reports == []  # not a transfer


@pytest.mark.parametrize("packet", [
    b"\x00\x01no-mode\x00",
    b"\x00\x01bootx64.efi\x00octet",  # no final NUL
    b"\x00\x01bootx64.efi\x00mail\x00",
    b"\x00\x09what\x00",
    b"\x00\x04\x00\x01",  # an ACK to the listener
    b"\x00",
], ids=["no mode", "unterminated", "mail mode", "unknown opcode", "ack", "short"])
async def test_a_malformed_packet_or_an_unknown_opcode_is_error_4(
        client: Client, files: Files, packet: bytes) -> None:
    client.send_raw(packet)
    code, _ = await client.error()
    assert code == 4
    assert files.asked == []


async def test_an_error_sent_to_the_listener_gets_no_answer(client: Client) -> None:
    client.send_raw(struct.pack("!HH", ERROR, 0) + b"hello\0")
    await client.nothing(0.1)


@pytest.mark.parametrize("name", ["../etc/passwd", "grub/../../etc/shadow", "..\\boot.ini",
                                  "grub/..", "a" * 256, "", "/", b"\xff\xfe"])
async def test_names_that_climb_or_are_too_long_never_reach_the_resolver(
        client: Client, files: Files, reports: list[Transfer], name: str | bytes) -> None:
    client.request(name)
    assert await client.error() == (1, "File not found")
    assert files.asked == []
    [report] = await reported(reports)
    assert report.error == "not served: invalid name"


async def test_a_name_with_a_nul_never_reaches_the_resolver(client: Client,
                                                            files: Files) -> None:
    # On the wire the NUL ends the name: what follows is read as the mode, and is not one.
    client.send_raw(b"\x00\x01grub\x00../../etc/shadow\x00octet\x00")
    code, _ = await client.error()
    assert code == 4
    assert files.asked == []


@pytest.mark.parametrize(("sent", "resolved"), [
    ("\\grub\\grub.cfg", "grub/grub.cfg"), ("/bootx64.efi", "bootx64.efi"),
    ("//pxe/./vmlinuz", "pxe/vmlinuz"), ("\\EFI\\BOOT\\\\BOOTX64.EFI", "EFI/BOOT/BOOTX64.EFI")])
async def test_backslashes_leading_slashes_and_dots_are_normalised(
        client: Client, files: Files, sent: str, resolved: str) -> None:
    data = files.add(resolved, b"found")
    assert await client.get(sent) == data
    assert files.asked == [(resolved, "127.0.0.1")]


# --- lock-step: loss, duplicates, block numbers -------------------------------------------------

async def test_a_lost_ack_gets_the_block_sent_again_after_the_timeout(
        client: Client, files: Files, reports: list[Transfer]) -> None:
    data = files.add("f", content(700))
    client.request("f")
    assert await client.data(1) == data[:512]
    began = time.monotonic()
    assert await client.data(1) == data[:512]  # our ACK "was lost": we sent none
    assert time.monotonic() - began >= 0.08
    client.ack(1)
    assert await client.data(2) == data[512:]
    client.ack(2)
    [report] = await reported(reports)
    assert report.error is None


async def test_a_duplicate_ack_does_not_send_the_block_again(start: Start,
                                                             files: Files) -> None:
    server = await start(timeout=1.0)
    client = Client(server.bound[0])
    data = files.add("f", content(1500))
    client.request("f")
    assert await client.data(1) == data[:512]
    client.ack(1)
    assert await client.data(2) == data[512:1024]
    client.ack(1)  # late duplicate of the ACK already answered
    await client.nothing(0.3)  # well within the 1 s timeout: no second DATA 2
    client.ack(2)
    assert await client.data(3) == data[1024:]
    client.close()


async def test_block_numbers_roll_over_from_65535_to_0(start: Start, files: Files,
                                                       reports: list[Transfer]) -> None:
    server = await start(timeout=5.0)
    client = Client(server.bound[0])
    blocks = 65537  # ... 65535, 0, 1 on the wire; the last one 5 bytes
    data = files.add("big", os.urandom(8 * (blocks - 1) + 5))
    client.request("big", blksize=8)
    assert await client.oack() == {"blksize": "8"}
    client.ack(0)
    _, wire, received = await client.receive()
    seen = [wire]
    block = 1  # the last one received
    while block < blocks:
        # ACKs a batch ahead, each naming the block the server has just sent (still lock-step
        # for the server), so that the test's loop makes no round trip per block
        batch = range(block, min(block + 100, blocks))
        for number in batch:
            client.ack(number)
        for _ in batch:
            _, wire, payload = await client.receive()
            seen.append(wire)
            received += payload
        block = batch[-1] + 1
    client.ack(blocks)
    assert seen[65533:] == [65534, 65535, 0, 1]
    assert seen == [n & 0xFFFF for n in range(1, blocks + 1)]
    assert bytes(received) == data
    [report] = await reported(reports)
    assert (report.error, report.sent) == (None, len(data))
    client.close()


# --- limits, stop, give-up ------------------------------------------------------------------------

async def test_more_than_max_transfers_is_answered_busy(start: Start, files: Files,
                                                        reports: list[Transfer]) -> None:
    server = await start(max_transfers=1, timeout=1.0)
    first, second = Client(server.bound[0]), Client(server.bound[0])
    files.add("f", content(2000))
    first.request("f")
    await first.data(1)
    second.request("f")
    assert await second.error() == (0, "busy: too many transfers")
    assert server.active == 1
    [busy] = await reported(reports)
    assert (busy.port, busy.error) == (second.port, "busy: too many transfers")
    first.close()
    second.close()


async def test_stop_aborts_a_running_transfer_and_reports_it(
        start: Start, files: Files, reports: list[Transfer]) -> None:
    server = await start(timeout=1.0)
    client = Client(server.bound[0])
    data = files.add("f", content(2000))
    client.request("f")
    assert await client.data(1) == data[:512]
    client.ack(1)
    await client.data(2)
    await server.stop()
    assert await client.error() == (0, "server shutting down")
    [report] = await reported(reports)
    assert report.error == "aborted: the TFTP server stopped"
    assert (report.sent, report.size) == (512, 2000)
    assert server.active == 0
    assert server.bound == []
    client.close()


async def test_a_client_that_stops_answering_is_given_up_after_the_retries(
        start: Start, files: Files, reports: list[Transfer],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ironsight.discoverd.pxe.tftp")
    server = await start(timeout=0.05, retries=2)
    client = Client(server.bound[0])
    files.add("f", content(600))
    client.request("f")
    for _ in range(3):  # the first DATA 1 and two retransmissions
        await client.data(1)
    [report] = await reported(reports)
    assert report.error == "timed out: no answer to block 1 after 2 retransmissions"
    await client.nothing(0.1)
    assert [r.levelname for r in caplog.records] == ["INFO"]
    assert "given up" in caplog.records[0].getMessage()
    client.close()


async def test_a_client_whose_port_is_gone_ends_the_transfer_at_once(
        start: Start, files: Files, reports: list[Transfer]) -> None:
    server = await start(timeout=0.05, retries=50)
    client = Client(server.bound[0])
    files.add("f", content(600))
    client.request("f")
    await client.data(1)
    client.close()  # the next retransmission meets an ICMP "port unreachable"
    [report] = await reported(reports)
    assert report.error == "client unreachable: Connection refused"
    assert report.seconds < 1


async def test_a_repeated_request_while_its_transfer_runs_starts_no_second_one(
        start: Start, files: Files, reports: list[Transfer]) -> None:
    server = await start(timeout=1.0)
    client = Client(server.bound[0])
    data = files.add("f", content(600))
    client.request("f")
    assert await client.data(1) == data[:512]
    client.send_raw(request("f"))  # the RRQ again, the client being impatient
    await client.nothing(0.2)
    assert server.active == 1
    client.ack(1)
    assert await client.data(2) == data[512:]
    client.ack(2)
    assert len(await reported(reports)) == 1
    client.close()


# --- netascii, reports, IPv6, descriptors, sockets ---------------------------------------------

async def test_netascii_sends_cr_lf_line_ends_and_cr_nul_for_a_bare_cr(
        client: Client, files: Files, tmp_path: Path) -> None:
    files.add("text", b"one\ntwo\rthree\r\n")
    wire = b"one\r\ntwo\r\0three\r\0\r\n"
    assert await client.get("text", "netascii") == wire
    client.request("text", "NetASCII", tsize=0)
    assert await client.oack() == {"tsize": str(len(wire))}  # the size after translation
    path = tmp_path / "text"
    path.write_bytes(b"one\ntwo\rthree\r\n")
    files.files["on-disk"] = TftpFile(path=path)
    assert await Client(client.server).get("on-disk", "netascii") == wire


async def test_on_done_reports_the_client_the_name_the_sizes_and_the_blksize(
        client: Client, files: Files, reports: list[Transfer]) -> None:
    files.add("pxe/initramfs", content(5000))
    await client.get("/pxe/initramfs", blksize=1024)
    [report] = await reported(reports)
    assert report == Transfer(host="127.0.0.1", port=client.port, filename="pxe/initramfs",
                              size=5000, sent=5000, seconds=report.seconds, blksize=1024,
                              error=None)
    assert 0 < report.seconds < 1


async def test_an_ipv6_listener_serves_on_loopback(start: Start, files: Files,
                                                   reports: list[Transfer]) -> None:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 on the loopback interface")
    server = await start(addresses=("::1",))
    assert server.bound[0][0] == "::1"
    client = Client(server.bound[0])
    data = files.add("bootx64.efi", content(1500))
    assert await client.get("bootx64.efi", blksize=1024) == data
    assert files.asked == [("bootx64.efi", "::1")]
    [report] = await reported(reports)
    assert (report.host, report.error) == ("::1", None)
    client.close()


async def test_a_file_replaced_by_rename_is_served_whole_from_the_one_opened(
        client: Client, files: Files, tmp_path: Path) -> None:
    path = tmp_path / "grubx64.efi"
    old = content(1500)
    path.write_bytes(old)
    files.files["grubx64.efi"] = TftpFile(path=path)
    client.request("grubx64.efi")
    received = await client.data(1)
    new = tmp_path / "grubx64.efi.new"
    new.write_bytes(b"N" * 2000)
    new.replace(path)  # an upgrade, mid-transfer
    for block in (1, 2):
        client.ack(block)
        received += await client.data(block + 1)
    client.ack(3)
    assert received == old
    assert await Client(client.server).get("grubx64.efi") == b"N" * 2000


async def test_every_socket_comes_from_the_socket_factory(start: Start, files: Files) -> None:
    made: list[int] = []

    def factory(family: int) -> socket.socket:
        made.append(family)
        return socket.socket(family, socket.SOCK_DGRAM)

    server = await start(socket_factory=factory)
    files.add("f", b"x")
    client = Client(server.bound[0])
    assert await client.get("f") == b"x"
    assert made == [socket.AF_INET, socket.AF_INET]  # the listener, the transfer
    client.close()


async def test_start_names_the_address_and_port_and_leaves_nothing_bound(files: Files) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        server = TftpServer(files)
        with pytest.raises(OSError, match=f"127.0.0.1 port {port}: Address already in use"):
            await server.start(["127.0.0.2", "127.0.0.1"], port)
        assert server.bound == []
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as again:
            again.bind(("127.0.0.2", port))  # the first address was let go
        with pytest.raises(OSError, match="localhost port 69: not an IP address"):
            await server.start(["localhost"])


def test_a_tftp_file_is_either_data_or_a_path() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        TftpFile()
    with pytest.raises(ValueError, match="exactly one"):
        TftpFile(data=b"x", path=Path("/x"))
