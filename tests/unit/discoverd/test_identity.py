"""What identifies a reporting machine, and what must never: shared and virtual NICs,
placeholder serials and UUIDs."""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.identity import identity_of

DRIVERS = ("cdc_ether", "cdc_ncm", "rndis_host")
UUID = "5f0c3a52-2b4f-4b1e-9f59-0c1d2e3f4a5b"


def inventory(*nics: tuple[str, str], serial: str = "CZ123", uuid: str = UUID,
              bmc: str | None = "10.0.0.5") -> dict[str, Any]:
    return {"interfaces": [{"mac_address": m, "driver": d} for m, d in nics],
            "bmc_address": bmc, "bmc_v6address": "::/0",
            "system_vendor": {"serial_number": serial, "uuid": uuid}}


def test_the_unique_macs_bmc_and_system_key_identify_the_machine() -> None:
    found = identity_of(inventory(("52:54:00:00:00:01", "virtio_net")), non_unique=(),
                        non_unique_drivers=DRIVERS)
    assert found.macs == ("52:54:00:00:00:01",)
    assert found.bmc_hosts == ("10.0.0.5",)
    assert found.system_key == f"CZ123|{UUID}"


def test_usb_nics_identify_nothing_but_are_kept_with_the_reason() -> None:
    found = identity_of(inventory(("52:54:00:00:00:01", "e1000"), ("36:11:22:33:44:55",
                                                                   "cdc_ether")),
                        non_unique=(), non_unique_drivers=DRIVERS)
    assert found.macs == ("52:54:00:00:00:01",)
    assert "cdc_ether" in found.excluded["36:11:22:33:44:55"]
    assert "36:11:22:33:44:55" in found.all_macs


def test_the_openbmc_mac_and_configured_macs_identify_nothing() -> None:
    found = identity_of(inventory(("02:00:00:00:00:02", "e1000"), ("52:54:00:00:00:07", "e1000"),
                                  ("52:54:00:00:00:08", "e1000")),
                        non_unique={"52:54:00:00:00:07"}, non_unique_drivers=DRIVERS)
    assert found.macs == ("52:54:00:00:00:08",)


def test_a_multicast_or_zero_mac_identifies_nothing() -> None:
    found = identity_of(inventory(("01:00:5e:00:00:01", "e1000"), ("00:00:00:00:00:00", "")),
                        non_unique=(), non_unique_drivers=DRIVERS)
    assert found.macs == ()


def test_placeholder_serials_and_uuids_give_no_system_key() -> None:
    for serial, uuid in (("To be filled by O.E.M.", UUID), ("CZ1", "00000000-0000-0000-0000-"
                                                          "000000000000"),
                         ("Default string", "03000200-0400-0500-0006-000700080009")):
        found = identity_of(inventory(serial=serial, uuid=uuid), non_unique=(),
                            non_unique_drivers=DRIVERS)
        assert found.system_key is None, (serial, uuid)


def test_a_ramdisks_empty_bmc_address_is_no_bmc() -> None:
    found = identity_of(inventory(bmc="0.0.0.0"), non_unique=(), non_unique_drivers=DRIVERS)
    assert found.bmc_hosts == ()


def test_without_a_mac_the_machine_is_named_by_what_is_left() -> None:
    found = identity_of(inventory(("52:54:00:00:00:01", "e1000")), non_unique=(),
                        non_unique_drivers=DRIVERS).without("52:54:00:00:00:01", "shared")
    assert found.macs == () and found.excluded == {"52:54:00:00:00:01": "shared"}
