"""What the openstacksdk tests check whatever the authentication (http_basic or Keystone):
a node's life through `conn.baremetal`, an introspection through
`conn.baremetal_introspection`."""

from __future__ import annotations

import random
import uuid
from typing import Any


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def manages_a_node(sdk: Any, prefix: str) -> None:
    node = sdk.baremetal.create_node(driver="fake", name=name(prefix))
    assert sdk.baremetal.get_node(node.id).name == node.name
    sdk.baremetal.set_node_provision_state(node, "manage", wait=True, timeout=30)
    assert sdk.baremetal.get_node(node.id).provision_state == "manageable"
    sdk.baremetal.delete_node(node)


def starts_and_reads_an_introspection(sdk: Any, prefix: str) -> None:
    node = sdk.baremetal.create_node(driver="fake", name=name(prefix))
    mac = "52:54:01:" + ":".join(f"{random.randrange(256):02x}" for _ in range(3))
    sdk.baremetal.create_port(node_id=node.id, address=mac)
    sdk.baremetal.set_node_provision_state(node, "manage", wait=True, timeout=30)
    sdk.baremetal_introspection.start_introspection(node.id, manage_boot=False)
    assert sdk.baremetal_introspection.get_introspection(node.id).id == node.id
    listed = [i.id for i in sdk.baremetal_introspection.introspections()]
    assert node.id in listed
    sdk.baremetal_introspection.abort_introspection(node.id)
