"""What dnsmasq's DHCP log says about a machine discoverd gives no boot file."""

from __future__ import annotations

import pytest

from ironsight.discoverd.pxe.dhcplog import DhcpWatch, client_class

ARM64 = ("dnsmasq-dhcp[7]: 341345027 vendor class: PXEClient:Arch:00011:UNDI:003000",
         "dnsmasq-dhcp[7]: 341345027 DHCPDISCOVER(pxe0) 52:54:00:77:00:01 ",
         "dnsmasq-dhcp[7]: 341345027 tags: arch, efi-aarch64, pxe0")
WHY = "[pxe] pxe_bootfile_name_by_arch bootaa64.efi: /usr/lib/shim/shimaa64.efi.signed does " \
      "not exist"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def feed(watch: DhcpWatch, lines: tuple[str, ...]) -> list[str]:
    return [m for m in (watch.feed(line) for line in lines) if m]


def test_an_arm64_machine_without_its_loader_is_named_by_mac_with_the_reason() -> None:
    (message,) = feed(DhcpWatch({"uefi_aarch64": WHY}), ARM64)
    assert "52:54:00:77:00:01" in message and "PXEClient:Arch:00011" in message
    assert message.endswith(WHY)


def test_the_lines_may_come_in_any_order() -> None:
    assert len(feed(DhcpWatch({"uefi_aarch64": WHY}), tuple(reversed(ARM64)))) == 1


def test_a_served_class_is_not_reported() -> None:
    assert feed(DhcpWatch({}), ARM64) == []


def test_the_same_machine_is_reported_once_a_minute() -> None:
    clock = Clock()
    watch = DhcpWatch({"uefi_aarch64": WHY}, clock=clock)
    again = tuple(line.replace("341345027", "999") for line in ARM64)
    assert len(feed(watch, ARM64)) == 1
    assert feed(watch, again) == []
    clock.now += 61
    assert len(feed(watch, tuple(line.replace("999", "1000") for line in again))) == 1


def test_an_operating_systems_dhcp_client_is_not_a_boot_client() -> None:
    lines = ("dnsmasq-dhcp[7]: 5 DHCPDISCOVER(pxe0) 52:54:00:77:00:02 ",
             "dnsmasq-dhcp[7]: 5 tags: pxe0")
    assert feed(DhcpWatch({"bios": "no iPXE"}), lines) == []


def test_an_architecture_no_option_covers_is_reported_with_its_number() -> None:
    lines = ("dnsmasq-dhcp[7]: 6 vendor class: PXEClient:Arch:00006:UNDI:003000",
             "dnsmasq-dhcp[7]: 6 DHCPDISCOVER(pxe0) 52:54:00:77:00:03 ",
             "dnsmasq-dhcp[7]: 6 tags: arch, pxe0")
    (message,) = feed(DhcpWatch({}), lines)
    assert "architecture (option 93 = 6)" in message


def test_a_dhcpv6_uefi_client_is_read_from_its_duid() -> None:
    lines = ("dnsmasq-dhcp[7]: 21 vendor class: 343",
             "dnsmasq-dhcp[7]: 21 DHCPSOLICIT(pxe0) 00:03:00:01:52:54:00:77:00:04 ",
             "dnsmasq-dhcp[7]: 21 tags: httpclient, efi-x86_64, dhcpv6, pxe0")
    (message,) = feed(DhcpWatch({"uefi_http_ipv6": "PXE only over IPv6"}), lines)
    assert "52:54:00:77:00:04" in message and message.endswith("PXE only over IPv6")


@pytest.mark.parametrize(("tags", "kind"), [
    ({"ipxe", "arch", "efi-x86_64"}, ""),
    ({"arch", "bios"}, "bios"),
    ({"pxe0"}, "bios"),
    ({"arch", "efi-x86_64"}, "uefi_x86_64"),
    ({"arch", "efi-x86_64", "httpclient"}, "uefi_http_x86_64"),
    ({"arch", "efi-aarch64"}, "uefi_aarch64"),
    ({"arch", "efi-aarch64", "httpclient"}, "uefi_http_aarch64"),
    ({"arch"}, None),
    ({"dhcpv6"}, "uefi_x86_64"),
    ({"dhcpv6", "efi-aarch64"}, "uefi_aarch64"),
    ({"dhcpv6", "httpclient"}, "uefi_http_ipv6"),
])
def test_client_class_follows_the_configs_dhcp_boot_rules(tags: set[str], kind: str | None
                                                          ) -> None:
    assert client_class(tags) == kind
