"""IPv6-only ports of the lab's bridge: the nftables rules and when the lab applies them.
(tests/functional/test_lab_ipv6_only.py runs them on a real bridge.)"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from ironsight.lab import network
from ironsight.lab.network import LabNetwork, NetworkError, ipv6_only_rules, restrict_to_ipv6

NET = LabNetwork(namespace="lab-ns", bridge="br-x")


def rule_lines(script: str) -> list[str]:
    return [line.strip() for line in script.splitlines() if "drop" in line]


def test_ipv4_and_arp_are_dropped_entering_the_bridge_from_the_ports() -> None:
    script = ipv6_only_rules(["tap3", "tap4"])
    assert 'iifname { "tap3", "tap4" } ether type { ip, arp } drop' in rule_lines(script)
    assert "hook prerouting" in script


def test_ipv4_and_arp_are_dropped_leaving_the_bridge_through_the_ports() -> None:
    script = ipv6_only_rules(["tap3"])
    assert 'oifname { "tap3" } ether type { ip, arp } drop' in rule_lines(script)
    assert "hook postrouting" in script


def test_the_rules_are_of_the_bridge_family_and_replace_the_labs_table() -> None:
    lines = ipv6_only_rules(["tap3"]).splitlines()
    assert lines[:3] == ["table bridge ironsight_lab", "delete table bridge ironsight_lab",
                         "table bridge ironsight_lab {"]


def test_nothing_but_ipv4_and_arp_is_dropped() -> None:
    assert len(rule_lines(ipv6_only_rules(["tap3"]))) == 2
    assert ipv6_only_rules(["tap3"]).count("policy accept") == 2


@pytest.mark.parametrize("name", ['tap"x', "tap 1", "", "a-name-longer-than-15"])
def test_a_port_name_that_is_no_interface_name_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a lab port name"):
        ipv6_only_rules([name])


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """subprocess.run stand-in: records each call; every command succeeds."""
    calls: list[dict[str, Any]] = []

    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append({"argv": argv, **kwargs})
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(network.subprocess, "run", run)
    monkeypatch.setattr(network.shutil, "which", lambda name: f"/usr/sbin/{name}")
    return calls


def test_the_rules_are_loaded_inside_the_labs_namespace_in_one_transaction(
        runs: list[dict[str, Any]]) -> None:
    restrict_to_ipv6(NET, ["tap3"])
    (call,) = runs
    assert call["argv"] == ["ip", "netns", "exec", "lab-ns", "nft", "-f", "-"]
    assert call["input"] == ipv6_only_rules(["tap3"])


def test_without_nft_the_error_names_nftables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network.shutil, "which", lambda name: None)
    with pytest.raises(NetworkError, match=r"apt-get install nftables"):
        restrict_to_ipv6(NET, ["tap3"])


def test_nfts_error_is_reported(runs: list[dict[str, Any]],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 1, "", "Error: Could not process rule")

    monkeypatch.setattr(network.subprocess, "run", failing)
    with pytest.raises(NetworkError, match="Could not process rule"):
        restrict_to_ipv6(NET, ["tap3"])


def commands(runs: list[dict[str, Any]]) -> list[str]:
    """The commands run, as text, in order."""
    return [" ".join(call["argv"]) for call in runs]


def test_the_lab_filters_its_ipv6_only_taps_before_it_creates_them(
        runs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "exists", lambda net: False)
    network.create(LabNetwork(namespace="lab-ns", ipv6_only_taps=("tap2",)), ["tap1", "tap2"])
    done = commands(runs)
    nft = done.index("ip netns exec lab-ns nft -f -")
    assert runs[nft]["input"] == ipv6_only_rules(["tap2"])
    first_tap = done.index("ip -n lab-ns tuntap add tap1 mode tap")
    assert nft < first_tap


def test_a_lab_without_ipv6_only_taps_runs_no_nft(runs: list[dict[str, Any]],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "exists", lambda net: False)
    network.create(LabNetwork(namespace="lab-ns"), ["tap1"])
    assert not any("nft" in command for command in commands(runs))
