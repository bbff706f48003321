"""dnsmasq's configuration as discoverd writes it, and how its log lines are read."""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

import pytest

from ironsight.discoverd.pxe import dnsmasq
from ironsight.discoverd.pxe.hostsdir import HostsDirDriver


def settings(tmp_path: Path, **kw: object) -> dnsmasq.DnsmasqSettings:
    binary = tmp_path / "undionly.kpxe"
    binary.write_bytes(b"ipxe")
    values: dict[str, object] = dict(
        interface="br-prov", dhcp_range="10.20.0.100,10.20.0.199,255.255.255.0,10m",
        http_url="http://10.20.0.1:5050", directory=tmp_path / "pxe", ipxe_binary=binary,
        router_advertisements=True,
        filter_options=tuple(HostsDirDriver(tmp_path / "pxe" / "hosts", False)
                             .dnsmasq_options()))
    values.update(kw)
    return dnsmasq.DnsmasqSettings(**values)  # type: ignore[arg-type]


def lines(s: dnsmasq.DnsmasqSettings) -> list[str]:
    return [line for line in dnsmasq.render(s).splitlines() if not line.startswith("#")]


def test_config_serves_dhcp_only_on_the_interface_without_router_or_dns(tmp_path: Path) -> None:
    conf = lines(settings(tmp_path))
    for line in ("port=0", "interface=br-prov", "bind-interfaces",
                 "dhcp-range=10.20.0.100,10.20.0.199,255.255.255.0,10m",
                 f"dhcp-leasefile={tmp_path / 'pxe' / 'dnsmasq.leases'}",
                 "dhcp-option=option:router", "dhcp-option=option:dns-server",
                 "log-dhcp", "log-facility=-", "pid-file="):
        assert line in conf
    assert not [line for line in conf if line.startswith(("server=", "dhcp-authoritative"))]


def test_config_sends_ipxe_the_http_script_and_plain_pxe_the_ipxe_binary(tmp_path: Path
                                                                         ) -> None:
    conf = lines(settings(tmp_path))
    assert "dhcp-userclass=set:ipxe,iPXE" in conf
    assert "dhcp-match=set:ipxe,175" in conf
    assert "dhcp-boot=tag:ipxe,http://10.20.0.1:5050/boot.ipxe" in conf
    assert "dhcp-boot=tag:!ipxe,undionly.kpxe" in conf
    assert "enable-tftp" in conf
    assert f"tftp-root={tmp_path / 'pxe' / 'tftp'}" in conf


def test_config_without_ipxe_binary_has_no_tftp(tmp_path: Path) -> None:
    conf = lines(settings(tmp_path, ipxe_binary=None))
    assert "enable-tftp" not in conf
    assert not [line for line in conf if line.startswith(("tftp-root", "dhcp-boot=tag:!ipxe"))]


def test_router_advertisements_are_only_sent_when_asked(tmp_path: Path) -> None:
    assert {"enable-ra", "dhcp-range=::,constructor:br-prov,ra-only"} <= set(
        lines(settings(tmp_path)))
    conf = lines(settings(tmp_path, router_advertisements=False))
    assert "enable-ra" not in conf and not [line for line in conf if "ra-only" in line]


def test_hostsdir_filter_adds_its_dir_and_denies_unknown_hosts_only_when_asked(
        tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    assert HostsDirDriver(hosts, False).dnsmasq_options() == [f"dhcp-hostsdir={hosts}"]
    assert HostsDirDriver(hosts, True).dnsmasq_options() == [f"dhcp-hostsdir={hosts}",
                                                             "dhcp-ignore=tag:!known"]


def test_user_is_set_only_when_given(tmp_path: Path) -> None:
    assert "user=root" in lines(settings(tmp_path, user="root"))
    assert not [line for line in lines(settings(tmp_path)) if line.startswith("user=")]


def test_tftp_root_holds_only_the_ipxe_binary(tmp_path: Path) -> None:
    s = settings(tmp_path)
    root = s.tftp_root
    (root / "sub").mkdir(parents=True)
    (root / "secret").write_text("no")
    (root / "link").symlink_to("/etc/passwd")
    dnsmasq.write_config(s)
    assert sorted(p.name for p in root.iterdir()) == ["undionly.kpxe"]
    assert (root / "undionly.kpxe").read_bytes() == b"ipxe"
    assert s.conf_file.read_text() == dnsmasq.render(s)


@pytest.mark.skipif(shutil.which("dnsmasq") is None, reason="dnsmasq is not installed")
@pytest.mark.parametrize("ra", [True, False])
def test_dnsmasq_accepts_the_written_config(tmp_path: Path, ra: bool) -> None:
    conf = dnsmasq.write_config(settings(tmp_path, router_advertisements=ra, user="root"))
    result = subprocess.run(["dnsmasq", "--test", f"--conf-file={conf}"], capture_output=True,
                            text=True, timeout=10)
    assert result.returncode == 0, result.stderr


def test_command_keeps_dnsmasq_in_the_foreground_with_the_config_last() -> None:
    assert dnsmasq.command("dnsmasq", Path("/s/pxe/dnsmasq.conf")) == [
        "dnsmasq", "--keep-in-foreground", "--conf-file=/s/pxe/dnsmasq.conf"]


def test_leases_are_read_from_the_log() -> None:
    line = ("dnsmasq-dhcp[14405]: 4698175 DHCPACK(pxe0) 10.77.0.100 52:54:00:AA:00:01 ")
    assert dnsmasq.parse_lease(line) == ("52:54:00:aa:00:01", "10.77.0.100")
    assert dnsmasq.parse_lease("dnsmasq-dhcp[1]: 1 DHCPOFFER(pxe0) 10.77.0.100 "
                               "52:54:00:aa:00:01") is None


@pytest.mark.parametrize(("line", "level"), [
    ("dnsmasq-dhcp[1]: 4 DHCPACK(pxe0) 10.77.0.100 52:54:00:aa:00:01 ", logging.INFO),
    ("dnsmasq-dhcp[1]: 1 DHCPDISCOVER(pxe0) 52:54:00:aa:00:01 ignored", logging.INFO),
    ("dnsmasq: unknown interface pxe9", logging.WARNING),
    ("dnsmasq-dhcp[1]: 4 sent size:  4 option: 51 lease-time  10m", logging.DEBUG),
])
def test_log_lines_get_a_level_by_what_they_tell(line: str, level: int) -> None:
    assert dnsmasq.log_level(line) == level


def test_lease_addresses_of_a_mac_from_the_lease_file(tmp_path: Path) -> None:
    leases = tmp_path / "dnsmasq.leases"
    leases.write_text("1700000000 52:54:00:aa:bb:01 10.20.0.105 node-a 01:52:54:00:aa:bb:01\n"
                      "1700000000 52:54:00:AA:BB:02 10.20.0.106 * *\n"
                      "garbage\n")
    assert dnsmasq.lease_addresses(leases, "52:54:00:aa:bb:01") == {"10.20.0.105"}
    assert dnsmasq.lease_addresses(leases, "52:54:00:aa:bb:02") == {"10.20.0.106"}
    assert dnsmasq.lease_addresses(leases, "52:54:00:aa:bb:03") == set()
    assert dnsmasq.lease_addresses(tmp_path / "missing", "52:54:00:aa:bb:01") == set()
