"""Built-in rules (`[inspection_rules] built_in_rules`) through discoverd's API and in a real
processing run: listed read-only, applied with the stored rules by priority."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import error_message, introspect, ipa_payload, make_node, node

RULES = "/v1/inspection_rules"
BUILT_IN_UUID = "00000000-0000-0000-0000-000000000000"
BUILT_IN = """
- description: built-in one
  priority: -1
  actions:
    - op: set-attribute
      args: {path: /extra/order, value: "{node.extra[order]}built-in;"}
"""


@pytest.fixture
def conf_overrides(tmp_path: Path) -> dict[str, dict[str, Any]]:
    path = tmp_path / "built-in-rules.yaml"
    path.write_text(BUILT_IN)
    return {"inspection_rules": {"built_in_rules": str(path)}}


async def test_built_in_rules_are_listed_read_only(di: httpx.AsyncClient) -> None:
    [item] = (await di.get(RULES, params={"detail": "true"})).json()["inspection_rules"]
    assert item["uuid"] == BUILT_IN_UUID and item["built_in"] is True
    assert item["priority"] == -1
    for resp in (await di.delete(f"{RULES}/{BUILT_IN_UUID}"),
                 await di.patch(f"{RULES}/{BUILT_IN_UUID}", json=[
                     {"op": "replace", "path": "/priority", "value": 1}])):
        assert resp.status_code == 403
        assert "built_in_rules" in error_message(resp)
    assert (await di.delete(RULES)).status_code == 204
    [left] = (await di.get(RULES)).json()["inspection_rules"]
    assert left["uuid"] == BUILT_IN_UUID


async def test_rules_apply_by_priority_with_the_built_in_ones(bm: httpx.AsyncClient,
                                                              di: httpx.AsyncClient) -> None:
    for name, priority in (("low", 0), ("high", 50), ("middle", 10), ("also-low", 0)):
        resp = await di.post(RULES, json={"description": name, "priority": priority,
                                          "actions": [{"op": "set-attribute", "args": {
                                              "path": "/extra/order",
                                              "value": "{node.extra[order]}" + name + ";"}}]})
        assert resp.status_code == 201, resp.text
    m = await make_node(bm)
    resp = await bm.patch(f"/v1/nodes/{m.uuid}", json=[
        {"op": "add", "path": "/extra/order", "value": ""}])
    assert resp.status_code == 200, resp.text
    await introspect(di, m, ipa_payload(m))
    # priority descending; equal priorities in creation order; built-in (-1) last
    assert (await node(bm, m.uuid))["extra"]["order"] == "high;middle;low;also-low;built-in;"
