"""The BMC probe of auto-discovery against the lab's real virtual IPMI BMC (pyghmi's BMC:
session-less Get Channel Authentication Capabilities, RMCP+ sessions, Get System GUID and,
given a serial, FRU 0), alone or beside a local Redfish service."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from ironsight.discoverd.bmc_probe import ProbeResult, probe
from ironsight.lab.bmc import BmcServer, InMemoryMachine, VirtualBmc

from ...unit.discoverd.test_bmc_probe import FakeRedfish, free_port

pytestmark = pytest.mark.functional

USER = "admin"
PASSWORD = "ipmi-s3cret"
MACHINE_UUID = "6b8f2a7e-1c3d-4e5f-9a0b-1c2d3e4f5a6b"
OTHER_UUID = "a1b2c3d4-e5f6-4a5b-8c7d-9e0f1a2b3c4d"


@contextmanager
def lab_bmc(**kwargs: Any) -> Iterator[VirtualBmc]:
    bmc = VirtualBmc(InMemoryMachine(), USER, PASSWORD, **kwargs)
    with BmcServer([bmc]):
        yield bmc


async def ipmi_probe(bmc: VirtualBmc, **kwargs: Any) -> ProbeResult:
    """Only IPMI answers: the Redfish port is one nothing listens on."""
    options: dict[str, Any] = {"redfish_port": free_port(socket.SOCK_STREAM), "timeout": 5.0,
                               **kwargs}
    return await probe(bmc.address, ipmi_port=bmc.port, **options)


async def test_ipmi_bmc_is_reachable_without_credentials() -> None:
    with lab_bmc() as bmc:
        result = await ipmi_probe(bmc)
    assert (result.reachable, result.protocol, result.serial_match) == (True, "ipmi", None)
    assert f"IPMI 2.0 answers on UDP port {bmc.port}" in result.detail
    assert "no credentials" in result.detail


async def test_bmc_of_this_machine_matches_by_its_fru_serial() -> None:
    with lab_bmc(system_uuid=MACHINE_UUID, serial="SN-0042") as bmc:
        result = await ipmi_probe(bmc, username=USER, password=PASSWORD,
                                  expected_serial=" sn-0042", expected_uuid=OTHER_UUID)
    assert (result.serial_match, result.bmc_serial, result.bmc_system_uuid) == (
        True, "SN-0042", MACHINE_UUID)


async def test_bmc_of_this_machine_matches_by_its_system_guid() -> None:
    """pyghmi's BMC sends the GUID in SMBIOS byte order; without a serial it has no FRU."""
    with lab_bmc(system_uuid=MACHINE_UUID) as bmc:
        result = await ipmi_probe(bmc, username=USER, password=PASSWORD,
                                  expected_serial="SN-0042",
                                  expected_uuid=MACHINE_UUID.upper())
    assert (result.serial_match, result.bmc_serial, result.bmc_system_uuid) == (
        True, None, MACHINE_UUID)


async def test_bmc_of_another_machine_does_not_match() -> None:
    with lab_bmc(system_uuid=OTHER_UUID, serial="SN-0099") as bmc:
        result = await ipmi_probe(bmc, username=USER, password=PASSWORD,
                                  expected_serial="SN-0042", expected_uuid=MACHINE_UUID)
    assert (result.serial_match, result.bmc_serial, result.bmc_system_uuid) == (
        False, "SN-0099", OTHER_UUID)
    assert "not this machine's" in result.detail


async def test_nothing_to_compare_gives_no_verdict_but_the_bmcs_facts() -> None:
    with lab_bmc(system_uuid=MACHINE_UUID) as bmc:
        result = await ipmi_probe(bmc, username=USER, password=PASSWORD)
    assert (result.serial_match, result.bmc_system_uuid) == (None, MACHINE_UUID)


async def test_wrong_password_raises_nothing_and_tells_no_password() -> None:
    wrong = "not-the-Pa55word"
    with lab_bmc(system_uuid=MACHINE_UUID, serial="SN-0042") as bmc:
        result = await ipmi_probe(bmc, username=USER, password=wrong,
                                  expected_serial="SN-0042")
    assert (result.reachable, result.protocol, result.serial_match) == (True, "ipmi", None)
    assert (result.bmc_serial, result.bmc_system_uuid) == (None, None)
    assert "IPMI login failed" in result.detail
    assert wrong not in json.dumps(result.to_dict()) and PASSWORD not in result.detail


async def test_ipmi_and_redfish_both_answering_is_redfish() -> None:
    with lab_bmc() as bmc, FakeRedfish() as redfish:
        result = await probe(bmc.address, ipmi_port=bmc.port, redfish_port=redfish.port,
                             redfish_scheme="http", timeout=5.0)
    assert (result.reachable, result.protocol) == (True, "redfish")
    assert "IPMI 2.0 answers" in result.detail and "Redfish 1.11.0 answers" in result.detail


async def test_redfish_refusing_the_credentials_falls_back_to_ipmi() -> None:
    """The manifest's user may be an IPMI user only: the system is read over IPMI then."""
    with lab_bmc(system_uuid=MACHINE_UUID, serial="SN-0042") as bmc, \
            FakeRedfish([{"SerialNumber": "SN-0042"}]) as redfish:
        result = await probe(bmc.address, ipmi_port=bmc.port, redfish_port=redfish.port,
                             redfish_scheme="http", username=USER, password=PASSWORD,
                             expected_serial="SN-0042", timeout=5.0)
    assert (result.protocol, result.serial_match, result.bmc_system_uuid) == (
        "redfish", True, MACHINE_UUID)
    assert ("Redfish refused the credentials (HTTP 401); over IPMI it reports serial SN-0042"
            in result.detail)
