"""`--rules N` of the inspection benchmark: N inspection rules (Ironic's dialect) created in
discoverd before the timed flow, the way an operator's rule set looks. Every report is
evaluated against all N; most rules look for a hardware model the bench's nodes are not
(two conditions each, the second never reached), and the last two match every node: one sets
the resource class and a capability, one adds a trait. So each node pays the evaluation of N
rules plus the bare-metal writes of two matching ones, which `verify` checks were made."""

from __future__ import annotations

from typing import Any

import benchauth
import httpx

RESOURCE_CLASS = "bench-large"
TRAIT = "CUSTOM_BENCH_MATCHED"


def rules(n: int) -> list[dict[str, Any]]:
    """`n` ≥ 2 rules: n - 2 that match no node, two that match every one."""
    misses = [{
        "description": f"model {i}",
        "priority": 100 + i,
        "conditions": [
            {"op": "eq", "args": {"values": ["{inventory[system_vendor][product_name]}",
                                             f"model-{i}"]}},
            {"op": "gt", "args": {"values": ["{inventory[memory][physical_mb]}", 1024 * i]}}],
        "actions": [{"op": "set-attribute",
                     "args": {"path": "/properties/bench_model", "value": f"model-{i}"}}],
    } for i in range(n - 2)]
    hits = [{
        "description": "large memory",
        "priority": 10,
        "conditions": [{"op": "gt", "args": {"values": ["{inventory[memory][physical_mb]}",
                                                        131072]}},
                       {"op": "eq", "args": {"values": ["{inventory[cpu][architecture]}",
                                                        "x86_64"]}}],
        "actions": [{"op": "set-attribute",
                     "args": {"path": "/resource_class", "value": RESOURCE_CLASS}},
                    {"op": "set-capability", "args": {"name": "bench", "value": "large"}}],
    }, {
        "description": "trait",
        "priority": 5,
        "conditions": [{"op": "contains", "args": {"value": "{inventory[cpu][flags]}",
                                                   "regex": "vmx"}}],
        "actions": [{"op": "add-trait", "args": {"name": TRAIT}}],
    }]
    return misses + hits


def create(di_port: int, n: int) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{di_port}",
                      headers=benchauth.CREDENTIALS.headers(), timeout=30) as client:
        for body in rules(n):
            resp = client.post("/v1/inspection_rules", json=body)
            resp.raise_for_status()


async def verify(conn: Any, uuids: list[str], n: int) -> None:
    """The two matching rules' effects on every node, as the bare-metal API shows them
    (`conn`: a loadgen.Connection to it, after the timed flow)."""
    for uuid in uuids:
        node = (await conn.request("GET", f"/v1/nodes/{uuid}")).json()
        assert node["resource_class"] == RESOURCE_CLASS, node["resource_class"]
        assert "bench:large" in node["properties"].get("capabilities", ""), node["properties"]
        traits = (await conn.request("GET", f"/v1/nodes/{uuid}/traits")).json()["traits"]
        assert TRAIT in traits, traits
