"""Sockets in another network namespace, made without leaving this process.

A socket belongs for its whole life to the namespace it was created in, so a process in one
namespace can serve or probe another (discoverd's TFTP server on a provisioning network that
only its dnsmasq sits in; the lab publishing ports; tests). Only the calling thread switches,
and only for the creation: network namespaces are per thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
from collections.abc import Iterator
from pathlib import Path

NETNS_DIR = Path("/run/netns")  # where `ip netns add` keeps its namespaces
CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    setns = getattr(os, "setns", None)  # Python >= 3.12
    if setns is not None:
        setns(fd, CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


@contextlib.contextmanager
def entered(namespace: str) -> Iterator[None]:
    """Sockets created in this block belong to `namespace` (a name under /run/netns)."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(NETNS_DIR / namespace, os.O_RDONLY)
        try:
            _setns(target)
        finally:
            os.close(target)
        try:
            yield
        finally:
            _setns(home)
    finally:
        os.close(home)


def socket_in(namespace: str | None, family: int,
              kind: int = socket.SOCK_DGRAM) -> socket.socket:
    """A socket of `namespace` (None: this thread's own)."""
    if namespace is None:
        return socket.socket(family, kind)
    with entered(namespace):
        return socket.socket(family, kind)
