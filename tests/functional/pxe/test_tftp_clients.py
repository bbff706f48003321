"""discoverd's TFTP server against real clients, curl and busybox's `tftp` applet, over the
loopback interface (no namespace needed): a file of a few MB arrives byte-identical, with and
without a negotiated block size, and a missing file is each client's "not found". The server
runs in the test's event loop; the clients are child processes."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from ironsight.discoverd.pxe.tftp import TftpFile, TftpServer, Transfer

SIZE = 3 * 1024 * 1024 + 123  # a few MB, not a multiple of any block size

Argv = Callable[[int, str, Path], list[str]]


def curl(*options: str) -> Argv:
    return lambda port, name, out: ["curl", "-s", "--max-time", "30", *options,
                                    f"tftp://127.0.0.1:{port}/{name}", "-o", str(out)]


def busybox(*options: str) -> Argv:
    return lambda port, name, out: ["busybox", "tftp", *options, "-g", "-r", name,
                                    "-l", str(out), "127.0.0.1", str(port)]


def skip_unless_installed(argv: list[str]) -> None:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed (scripts/install-deps.sh installs it)")
    if argv[0] == "busybox":
        applets = subprocess.run(["busybox", "--list"], capture_output=True, text=True,
                                 timeout=10).stdout.split()
        if "tftp" not in applets:
            pytest.skip("this busybox has no tftp applet")


CLIENTS = {"curl blksize 1024": (curl("--tftp-blksize", "1024"), 1024),
           "curl": (curl(), 512),
           "busybox tftp": (busybox(), 512),
           "busybox tftp -b 1024": (busybox("-b", "1024"), 1024)}


@pytest.fixture
def reports() -> list[Transfer]:
    return []


@pytest.fixture
async def server(tmp_path: Path, reports: list[Transfer]) -> AsyncIterator[TftpServer]:
    """Serves the files of tmp_path/files; nothing else is found."""
    root = tmp_path / "files"
    root.mkdir()

    async def resolve(name: str, host: str) -> TftpFile | None:
        path = root / name
        return TftpFile(path=path) if path.is_file() else None

    server = TftpServer(resolve, on_done=reports.append)
    await server.start(["127.0.0.1"], 0)
    yield server
    await server.stop()


async def run(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@pytest.mark.parametrize(("argv", "blksize"), CLIENTS.values(), ids=CLIENTS.keys())
async def test_a_file_of_a_few_mb_arrives_byte_identical(
        server: TftpServer, reports: list[Transfer], tmp_path: Path, argv: Argv,
        blksize: int) -> None:
    port = server.bound[0][1]
    skip_unless_installed(argv(port, "", tmp_path))
    data = os.urandom(SIZE)
    (tmp_path / "files" / "initramfs").write_bytes(data)
    out = tmp_path / "out"
    done = await run(argv(port, "initramfs", out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == data
    [report] = reports
    assert (report.filename, report.size, report.sent, report.blksize, report.error) == (
        "initramfs", SIZE, SIZE, blksize, None)


@pytest.mark.parametrize(("argv", "code", "says"), [
    (curl(), 68, b""),  # curl's exit status for "TFTP: file not found"
    (busybox(), 1, b"File not found")], ids=["curl", "busybox tftp"])
async def test_a_missing_file_is_the_clients_not_found(
        server: TftpServer, reports: list[Transfer], tmp_path: Path, argv: Argv, code: int,
        says: bytes) -> None:
    port = server.bound[0][1]
    skip_unless_installed(argv(port, "", tmp_path))
    done = await run(argv(port, "pxelinux.cfg/default", tmp_path / "out"))
    assert done.returncode == code, done.stderr
    assert says in done.stderr
    assert not (tmp_path / "out").exists()
    [report] = reports
    assert (report.filename, report.error) == ("pxelinux.cfg/default", "not found")
