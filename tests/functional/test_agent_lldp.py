"""LLDP capture on real sockets: a network namespace of our own with veth pairs, the lab's
LLDP sender on one end of each (the switch), the agent's capture on the other (the node).

Nothing here touches the host's interfaces: the namespace is created for the module and
deleted after it, with everything in it.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Iterator

import pytest

from ironsight.agent import lldp
from ironsight.lab import network
from ironsight.lab.lldp import Port, Sender, frame

SWITCH_MAC = "02:00:0a:14:00:01"
PAIRS = {"sw1": "nic1", "sw2": "nic2"}  # switch end -> node end


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


@pytest.fixture(scope="module")
def namespace() -> Iterator[str]:
    if os.geteuid() != 0:
        pytest.skip("raw sockets and network namespaces need root")
    name = f"islldp-{secrets.token_hex(3)}"
    _ip("netns", "add", name)
    try:
        for switch_end, node_end in PAIRS.items():
            _ip("-n", name, "link", "add", switch_end, "type", "veth", "peer", "name", node_end)
            _ip("-n", name, "link", "set", switch_end, "up")
            _ip("-n", name, "link", "set", node_end, "up")
        yield name
    finally:
        _ip("netns", "del", name)


@pytest.fixture
def switch(namespace: str) -> Iterator[Sender]:
    sender = Sender(namespace, {end: Port(SWITCH_MAC, f"Ethernet1/{i}")
                                for i, end in enumerate(PAIRS, 1)}, interval=0.2).start()
    yield sender
    sender.close()


def _capture(namespace: str, names: list[str], timeout: float,
             warnings: list[str] | None = None) -> dict[str, lldp.Tlvs]:
    with network.entered(namespace):
        return lldp.capture(names, timeout, warnings)


def test_each_interface_gets_its_own_switch_port(namespace, switch):
    found = _capture(namespace, ["nic1", "nic2"], timeout=10.0)
    assert found["nic1"] == lldp.parse_frame(frame(Port(SWITCH_MAC, "Ethernet1/1")))
    assert found["nic2"] == lldp.parse_frame(frame(Port(SWITCH_MAC, "Ethernet1/2")))


def test_capture_ends_as_soon_as_every_interface_has_a_frame(namespace, switch):
    began = time.monotonic()
    _capture(namespace, ["nic1", "nic2"], timeout=30.0)
    assert time.monotonic() - began < 5.0


def test_without_a_switch_capture_ends_at_the_timeout_with_nothing(namespace):
    began = time.monotonic()
    assert _capture(namespace, ["nic1"], timeout=0.5) == {}
    assert 0.5 <= time.monotonic() - began < 3.0


def test_a_frame_the_node_sends_itself_is_not_its_switchs(namespace):
    own = Sender(namespace, {"nic1": Port("02:00:00:00:00:99", "mine")}, interval=0.1).start()
    try:
        assert _capture(namespace, ["nic1"], timeout=1.0) == {}
    finally:
        own.close()


def test_an_interface_missing_from_the_namespace_is_a_warning_not_a_failure(namespace, switch):
    warnings: list[str] = []
    found = _capture(namespace, ["nic1", "eth9"], timeout=10.0, warnings=warnings)
    assert list(found) == ["nic1"]
    assert len(warnings) == 1 and "eth9" in warnings[0]
