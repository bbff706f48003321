"""dnsmasq's configuration as discoverd writes it, and how its log lines are read."""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

import pytest

from ironsight.discoverd.pxe import dnsmasq
from ironsight.discoverd.pxe.hostsdir import HostsDirDriver

PROGRAMS = dnsmasq.BootPrograms(bios="undionly.kpxe", uefi_x86_64="bootx64.efi",
                                uefi_http_x86_64="snponly.efi", uefi_aarch64="bootaa64.efi")
IPV6 = dict(dhcp_range_ipv6="fd20::100,fd20::1ff,slaac,64,10m",
            http_url_ipv6="http://[fd20::1]:5050", tftp_ipv6="fd20::1")


def settings(tmp_path: Path, **kw: object) -> dnsmasq.DnsmasqSettings:
    values: dict[str, object] = dict(
        interface="br-prov", dhcp_range="10.20.0.100,10.20.0.199,255.255.255.0,10m",
        http_url="http://10.20.0.1:5050", directory=tmp_path / "pxe", programs=PROGRAMS,
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


def test_config_sends_ipxe_the_http_script(tmp_path: Path) -> None:
    conf = lines(settings(tmp_path))
    assert "dhcp-userclass=set:ipxe,iPXE" in conf
    assert "dhcp-match=set:ipxe,175" in conf
    assert "dhcp-boot=tag:ipxe,http://10.20.0.1:5050/boot.ipxe" in conf


def test_config_tags_each_client_architecture_of_option_93(tmp_path: Path) -> None:
    conf = lines(settings(tmp_path))
    assert "dhcp-match=set:arch,option:client-arch" in conf  # any: BIOS when absent
    for code, tag in ((0, "bios"), (7, "efi-x86_64"), (9, "efi-x86_64"), (16, "efi-x86_64"),
                      (11, "efi-aarch64"), (19, "efi-aarch64")):
        assert f"dhcp-match=set:{tag},option:client-arch,{code}" in conf


def test_config_gives_bios_pxe_roms_ipxe_over_tftp_with_or_without_option_93(
        tmp_path: Path) -> None:
    conf = lines(settings(tmp_path))
    assert "dhcp-boot=tag:!ipxe,tag:bios,undionly.kpxe" in conf
    assert "dhcp-boot=tag:!ipxe,tag:!arch,undionly.kpxe" in conf


def test_config_gives_x86_64_uefi_pxe_its_loader_over_tftp(tmp_path: Path) -> None:
    assert "dhcp-boot=tag:!ipxe,tag:efi-x86_64,tag:!httpclient,bootx64.efi" in lines(
        settings(tmp_path))


def test_config_gives_uefi_http_boot_a_url_and_echoes_its_vendor_class(tmp_path: Path
                                                                       ) -> None:
    conf = lines(settings(tmp_path))
    assert "dhcp-vendorclass=set:httpclient,HTTPClient" in conf
    assert "dhcp-option-force=tag:httpclient,option:vendor-class,HTTPClient" in conf
    assert ("dhcp-boot=tag:!ipxe,tag:efi-x86_64,tag:httpclient,"
            "http://10.20.0.1:5050/boot/efi/snponly.efi") in conf


def test_config_gives_arm64_uefi_pxe_its_loader_when_one_is_installed(tmp_path: Path
                                                                       ) -> None:
    boot = "dhcp-boot=tag:!ipxe,tag:efi-aarch64,tag:!httpclient,bootaa64.efi"
    assert boot in lines(settings(tmp_path))
    missing = dnsmasq.BootPrograms(bios="undionly.kpxe", uefi_x86_64="bootx64.efi")
    conf = lines(settings(tmp_path, programs=missing))
    assert not [line for line in conf if "efi-aarch64" in line and "dhcp-boot" in line]
    assert not [line for line in conf if "tag:httpclient" in line and "dhcp-boot" in line]


def test_config_without_any_loader_boots_only_ipxe(tmp_path: Path) -> None:
    conf = lines(settings(tmp_path, programs=dnsmasq.BootPrograms()))
    assert [line for line in conf if line.startswith("dhcp-boot")] == [
        "dhcp-boot=tag:ipxe,http://10.20.0.1:5050/boot.ipxe"]


def test_config_leaves_tftp_to_discoverd(tmp_path: Path) -> None:
    conf = lines(settings(tmp_path))
    assert not [line for line in conf if line.startswith(("enable-tftp", "tftp-"))]


def test_config_without_an_ipv6_range_serves_no_dhcpv6(tmp_path: Path) -> None:
    assert not [line for line in lines(settings(tmp_path)) if "option6" in line]


def test_config_with_an_ipv6_range_sends_boot_file_urls_in_option_59(tmp_path: Path
                                                                      ) -> None:
    conf = lines(settings(tmp_path, **IPV6))
    assert "dhcp-range=fd20::100,fd20::1ff,slaac,64,10m" in conf
    assert "dhcp-option=tag:ipxe,option6:bootfile-url,http://[fd20::1]:5050/boot.ipxe" in conf
    assert ("dhcp-option=tag:!ipxe,tag:!efi-aarch64,tag:!httpclient,option6:bootfile-url,"
            "tftp://[fd20::1]/bootx64.efi") in conf
    assert ("dhcp-option=tag:!ipxe,tag:efi-aarch64,tag:!httpclient,option6:bootfile-url,"
            "tftp://[fd20::1]/bootaa64.efi") in conf
    assert "dhcp-match=set:efi-aarch64,option6:61,00:0b" in conf
    assert "dhcp-vendorclass=set:httpclient,enterprise:343,HTTPClient" in conf


def test_an_ipv6_range_replaces_the_router_advertisements_own_range(tmp_path: Path) -> None:
    conf = lines(settings(tmp_path, **IPV6))
    assert "enable-ra" in conf
    assert not [line for line in conf if "ra-only" in line]


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


def test_write_config_writes_the_rendered_config(tmp_path: Path) -> None:
    s = settings(tmp_path)
    dnsmasq.write_config(s)
    assert s.conf_file.read_text() == dnsmasq.render(s)


@pytest.mark.skipif(shutil.which("dnsmasq") is None, reason="dnsmasq is not installed")
@pytest.mark.parametrize(("ra", "ipv6"), [(True, False), (False, False), (True, True)])
def test_dnsmasq_accepts_the_written_config(tmp_path: Path, ra: bool, ipv6: bool) -> None:
    conf = dnsmasq.write_config(settings(tmp_path, router_advertisements=ra, user="root",
                                         **(IPV6 if ipv6 else {})))
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


def test_lease_addresses_include_dhcpv6_leases_whose_duid_holds_the_mac(tmp_path: Path
                                                                        ) -> None:
    leases = tmp_path / "dnsmasq.leases"
    leases.write_text("duid 00:01:00:01:2c:aa:bb:cc:02:00:0a:14:00:01\n"
                      "1700000000 1 fd20::1da * 00:01:00:01:31:ec:e7:5b:52:54:00:30:00:01\n"
                      "1700000000 2 fd20::1db * 00:03:00:01:52:54:00:30:00:02\n"
                      "1700000000 3 fd20::1dc * 00:04:9b:1c:6a:13:0e:41:48:b4:aa:bb:cc:dd\n")
    assert dnsmasq.lease_addresses(leases, "52:54:00:30:00:01") == {"fd20::1da"}
    assert dnsmasq.lease_addresses(leases, "52:54:00:30:00:02") == {"fd20::1db"}


@pytest.mark.parametrize(("duid", "mac"), [
    ("00:01:00:01:31:ec:e7:5b:52:54:00:30:00:01", "52:54:00:30:00:01"),  # DUID-LLT
    ("00:03:00:01:52:54:00:30:00:02", "52:54:00:30:00:02"),  # DUID-LL
    ("00:04:9b:1c:6a:13:0e:41:48:b4:aa:bb:cc:dd:ee:ff:00:11", None),  # DUID-UUID
    ("00:01:00:06:31:ec:e7:5b:52:54:00:30:00:01", None),  # not Ethernet
    ("zz", None),
])
def test_duid_mac_reads_the_mac_of_link_layer_duids_only(duid: str, mac: str | None) -> None:
    assert dnsmasq.duid_mac(duid) == mac
