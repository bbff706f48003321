"""The report keys Ironic's hooks read pass validation as ironic-python-agent sends them
(kept apart from test_formats.py: the agent side of the formats grows in parallel).

Their content is the hooks' to judge: a malformed LLDP value is a warning there (see
plugins/test_parse_lldp.py), never a refused report."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.discoverd import formats

from . import lldp_frames as f
from .helpers import agent_report

IPA_KEYS: dict[str, Any] = {
    "lldp_raw": {"eth0": f.switch_port()},
    "pci_devices": [{"vendor_id": "10de", "product_id": "1eb8", "class": "030200",
                     "revision": "a1", "bus": "0000:3b:00.0", "numa_node_id": 0}],
    "data": [["cpu", "logical", "number", "16"]],
}


@pytest.mark.parametrize("key", sorted(IPA_KEYS))
def test_top_level_keys_of_the_hooks_are_accepted_and_kept(key: str) -> None:
    report = agent_report(**{key: IPA_KEYS[key]})
    assert formats.normalize(report)[key] == IPA_KEYS[key]


def test_an_interfaces_own_lldp_is_accepted_and_kept() -> None:
    report = agent_report()
    report["inventory"]["interfaces"][0]["lldp"] = f.switch_port()
    assert formats.normalize(report)["inventory"]["interfaces"][0]["lldp"] == f.switch_port()


def test_malformed_lldp_is_not_a_reason_to_refuse_the_report() -> None:
    report = agent_report(lldp_raw={"eth0": [[1, "zz"], "junk"]})
    assert formats.normalize(report)["lldp_raw"] == {"eth0": [[1, "zz"], "junk"]}
