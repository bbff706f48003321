"""The node and port fields rules may change are those the bare-metal API lets a PATCH
change (discoverd does not import the bare-metal service; this test keeps both in step)."""

from __future__ import annotations

from ironsight.baremetal.api import nodes, ports
from ironsight.discoverd.rules import actions


def test_node_fields_are_the_apis_patchable_fields() -> None:
    assert set(actions.NODE_FIELDS) == set(nodes._PATCHABLE)


def test_port_fields_are_the_apis_patchable_fields_but_node_uuid() -> None:
    assert set(actions.PORT_FIELDS) == set(ports._PATCHABLE) - {"node_uuid"}
