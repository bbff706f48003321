"""Keeping a child running: restart with backoff, clean stop, and a child left behind by a
killed discoverd. A small shell script plays dnsmasq."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

from ironsight.discoverd.pxe.supervisor import Supervisor


async def wait_for(condition, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def child(script: str) -> list[str]:
    return ["sh", "-c", script, "fake-dnsmasq", "--conf-file=/x/dnsmasq.conf"]


async def test_child_output_lines_are_forwarded_and_running_is_set() -> None:
    lines: list[str] = []
    sup = Supervisor(child("echo started >&2; exec sleep 30"), name="fake",
                     on_line=lines.append)
    sup.start()
    try:
        await asyncio.wait_for(sup.running.wait(), 5)
        assert lines == ["started"]
        assert sup.pid is not None
    finally:
        await sup.stop()


async def test_a_child_that_exits_is_restarted_with_a_growing_delay() -> None:
    sup = Supervisor(child("echo up >&2; exit 3"), name="fake", on_line=lambda _: None,
                     min_backoff=0.05, max_backoff=0.2)
    sup.start()
    try:
        began = time.monotonic()
        await wait_for(lambda: sup.restarts >= 4)
        # 0.05 + 0.1 + 0.2 + 0.2: the delay doubles up to its maximum
        assert time.monotonic() - began >= 0.5
    finally:
        await sup.stop()


async def test_stop_ends_the_child_and_it_stays_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    sup = Supervisor(child("echo up >&2; exec sleep 30"), name="fake", on_line=lambda _: None,
                     pid_file=pid_file, min_backoff=0.01)
    sup.start()
    await asyncio.wait_for(sup.running.wait(), 5)
    pid = sup.pid
    assert pid_file.read_text().strip() == str(pid)
    began = time.monotonic()
    await sup.stop()
    assert time.monotonic() - began < 2
    assert not Path(f"/proc/{pid}").exists() or b"zombie" in Path(
        f"/proc/{pid}/status").read_bytes().lower()
    assert not pid_file.exists()
    await asyncio.sleep(0.1)
    assert sup.restarts == 0


async def test_a_child_left_by_a_killed_discoverd_is_ended_before_a_new_one_starts(
        tmp_path: Path) -> None:
    # a program that keeps its arguments (an exec'd `sleep` would not)
    argv = [sys.executable, "-c", "import time; time.sleep(30)", "--conf-file=/x/dnsmasq.conf"]
    stale = subprocess.Popen(argv)
    cmdline = Path(f"/proc/{stale.pid}/cmdline")
    for _ in range(500):  # until the child has exec'd (before, /proc shows our own argv)
        if b"--conf-file=/x/dnsmasq.conf" in cmdline.read_bytes():
            break
        time.sleep(0.01)
    pid_file = tmp_path / "child.pid"
    pid_file.write_text(f"{stale.pid}\n")
    sup = Supervisor(argv, name="fake", on_line=lambda _: None, pid_file=pid_file)
    sup.start()
    try:
        assert stale.wait(5) == -9
    finally:
        await sup.stop()


async def test_a_recorded_pid_of_another_program_is_left_alone(tmp_path: Path) -> None:
    other = subprocess.Popen(["sleep", "30"])
    pid_file = tmp_path / "child.pid"
    pid_file.write_text(f"{other.pid}\n")
    try:
        Supervisor(child("exit 0"), name="fake", on_line=lambda _: None,
                   pid_file=pid_file).end_stale()
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
