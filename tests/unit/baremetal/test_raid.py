"""The target RAID configuration as Ironic's schema and checks take it."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.baremetal.raid import RAID_LEVELS, check_target
from ironsight.common.exceptions import Invalid


def disks(*logical: dict[str, Any]) -> dict[str, Any]:
    return {"logical_disks": list(logical)}


@pytest.mark.parametrize("level", RAID_LEVELS)
def test_every_raid_level_of_ironics_schema_is_taken(level: str) -> None:
    config = disks({"size_gb": 100, "raid_level": level})
    assert check_target(config) == config


def test_max_size_is_taken() -> None:
    assert check_target(disks({"size_gb": "MAX", "raid_level": "JBOD"}))


def test_every_optional_property_is_taken() -> None:
    config = disks({"size_gb": 10, "raid_level": "1", "volume_name": "root",
                    "is_root_volume": True, "share_physical_disks": False, "disk_type": "ssd",
                    "interface_type": "sas", "number_of_physical_disks": 2,
                    "controller": "RAID.Integrated.1-1", "physical_disks": ["d0", "d1"]})
    assert check_target(config) == config


def test_an_empty_configuration_unsets() -> None:
    assert check_target({}) == {}


@pytest.mark.parametrize(("config", "message"), [
    ([], "must be a JSON object"),
    ({"disks": []}, "logical_disks: Field required"),
    (disks(), "logical_disks: List should have at least 1 item"),
    (disks({"size_gb": 10}), "logical_disks[0].raid_level: Field required"),
    (disks({"raid_level": "1"}), "logical_disks[0].size_gb: Field required"),
    (disks({"size_gb": 10, "raid_level": "7"}), "logical_disks[0].raid_level: Input should be"),
    (disks({"size_gb": 0, "raid_level": "1"}),
     "logical_disks[0].size_gb: should be an integer greater than 0, or 'MAX'"),
    (disks({"size_gb": "max", "raid_level": "1"}), "logical_disks[0].size_gb: should be"),
    (disks({"size_gb": True, "raid_level": "1"}), "logical_disks[0].size_gb: should be"),
    (disks({"size_gb": "10", "raid_level": "1"}), "logical_disks[0].size_gb: should be"),
    (disks({"size_gb": 10, "raid_level": "1", "colour": "red"}),
     "logical_disks[0].colour: Extra inputs are not permitted"),
    (disks({"size_gb": 10, "raid_level": "1", "disk_type": "nvme"}),
     "logical_disks[0].disk_type: Input should be 'hdd' or 'ssd'"),
    (disks({"size_gb": 10, "raid_level": "1", "volume_name": None}),
     "logical_disks[0].volume_name: None is not allowed"),
    (disks({"size_gb": 10, "raid_level": "1", "physical_disks": ["d0"]}),
     "logical_disks[0]: physical_disks needs controller"),
])
def test_a_bad_configuration_is_refused_naming_the_field(config: Any, message: str) -> None:
    with pytest.raises(Invalid, match=r"^RAID config validation error: ") as caught:
        check_target(config)
    assert message in caught.value.message


def test_two_root_volumes_are_refused_in_ironics_words() -> None:
    root = {"size_gb": 10, "raid_level": "1", "is_root_volume": True}
    with pytest.raises(Invalid) as caught:
        check_target(disks(root, root))
    assert caught.value.message == ("Raid config cannot have more than one root volume. "
                                    "2 root volumes were specified")
