"""The hardware types, as the conductor loads them: through entry points, by name."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from ironsight.baremetal.drivers import loader
from ironsight.baremetal.drivers.base import HardwareType, ManagementInterface, PowerInterface
from ironsight.baremetal.drivers.discoverd_inspect import DiscoverdInspect
from ironsight.baremetal.drivers.fake import FakeInspect
from ironsight.baremetal.interfaces import INTERFACES, LEGACY_STORED
from ironsight.common import config


def load(name: str) -> HardwareType:
    (entry,) = entry_points(group="ironsight.hardware_types", name=name)
    hardware = entry.load()
    assert isinstance(hardware, HardwareType)
    return hardware


@pytest.mark.parametrize("name", ["pxe_ipmitool", "pxe_ipminative", "pxe_ssh"])
def test_hardware_type_loads_by_its_name(name: str) -> None:
    hardware = load(name)
    assert hardware.name == name
    conf = config.load()
    assert isinstance(hardware.power(conf), PowerInterface)
    assert isinstance(hardware.management(conf), ManagementInterface)


def test_the_fake_entry_point_is_ironics_fake_hardware() -> None:
    assert load("fake").name == "fake-hardware"


def test_fake_is_an_alias_the_loader_resolves() -> None:
    known = loader.available()
    assert known["fake"] is known["fake-hardware"]
    assert loader.aliases(known) == {"fake": "fake-hardware"}


def test_fake_and_fake_hardware_enabled_together_load_one_type() -> None:
    conf = config.load(overrides={"conductor": {"enabled_hardware_types":
                                                "fake,fake-hardware"}})
    drivers = loader.load_drivers(conf)
    assert list(drivers) == ["fake-hardware"]
    assert drivers["fake"] is drivers["fake-hardware"]
    assert drivers.names_of("fake-hardware") == ["fake-hardware", "fake"]


def test_fake_has_fake_inspection_when_discoverd_is_disabled() -> None:
    fake = load("fake")
    assert fake.inspect is not None
    assert isinstance(fake.inspect(config.load()), FakeInspect)
    names = fake.interface_names
    assert {names[i] for i in ("boot", "deploy", "inspect", "management", "power")} == {"fake"}


def test_fake_hardware_names_every_interface_ironic_has() -> None:
    assert set(load("fake").interface_names) == set(INTERFACES)


def test_only_fake_hardware_provisions() -> None:
    assert load("fake").provisions
    assert not any(load(n).provisions for n in ("pxe_ipmitool", "pxe_ipminative", "pxe_ssh"))


def test_fake_inspects_through_discoverd_when_enabled() -> None:
    fake = load("fake")
    assert fake.inspect is not None
    conf = config.load(overrides={"discoverd": {"enabled": "true",
                                                "service_url": "http://127.0.0.1:5050/v1"}})
    assert isinstance(fake.inspect(conf), DiscoverdInspect)


@pytest.mark.parametrize(("name", "interface"), [
    ("pxe_ipmitool", "ipmitool"), ("pxe_ipminative", "ipminative"), ("pxe_ssh", "ssh")])
def test_real_types_inspect_through_discoverd(name: str, interface: str) -> None:
    hardware = load(name)
    assert hardware.inspect is DiscoverdInspect
    assert hardware.interface_names == {"power": interface, "management": interface,
                                        "boot": "pxe", "deploy": "fake",
                                        "inspect": "discoverd", **LEGACY_STORED}


@pytest.mark.parametrize(("name", "secrets"), [
    ("pxe_ipmitool", {"ipmi_password"}),
    ("pxe_ipminative", {"ipmi_password"}),
    ("pxe_ssh", {"ssh_password", "ssh_key_contents"}),
])
def test_secrets_are_declared_for_masking(name: str, secrets: set[str]) -> None:
    hardware = load(name)
    conf = config.load()
    assert hardware.power(conf).secret_properties == secrets
    assert hardware.management(conf).secret_properties == secrets


@pytest.mark.parametrize("name", ["pxe_ipmitool", "pxe_ipminative", "pxe_ssh"])
def test_every_property_says_if_it_is_required(name: str) -> None:
    properties = load(name).power(config.load()).properties
    assert properties
    for key, text in properties.items():
        assert key.split("_")[0] in ("ipmi", "ssh")
        assert text.startswith(("Required.", "Optional."))
