"""The rules engine alone, in-process: `apply_rules` of the `--rules N` rule set
(bench/benchrules.py) on one bench node's report, and the size and JSON encoding time of the
traces processing stores. CPU time (process_time), best of 7 batches of 100 runs, so that a
loaded machine disturbs it less than the whole flow.

    PYTHONPATH=src .venv/bin/python bench/bench_rules_engine.py [--rules 100] [--full]
    PYTHONPATH=src .venv/bin/python bench/bench_rules_engine.py --profile   # cProfile's top 25

`--full`: traces of unmatched rules in full (as before issue 13 and as the dry run), instead
of processing's compact ones (an engine without the `compact` option always traces in full).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import inspect
import json
import pstats
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import benchrules
from bench_discoverd import report

from ironsight.discoverd.rules.engine import apply_rules
from ironsight.discoverd.rules.model import Facts, MaskPolicy, Outcome, Rule
from ironsight.discoverd.rules.validate import parse_ironic


def facts() -> Facts:
    """Node 1 of the bench as discoverd's processing gives it to the rules."""
    rep = report(1)
    node: dict[str, Any] = {
        "uuid": str(uuid.uuid4()), "name": None, "driver": "fake-hardware",
        "properties": {"cpus": 40, "memory_mb": 196608, "capabilities": "boot_mode:uefi"},
        "driver_info": {"ipmi_address": "198.18.0.1", "ipmi_password": "******"},
        "extra": {}, "instance_info": {}, "traits": [], "resource_class": None,
        "provision_state": "inspecting"}
    node.update({f"field_{i}": None for i in range(40)})  # the rest of a full node
    plugin_data = {"root_disk": rep["root_disk"], "boot_interface": rep["boot_interface"]}
    ports = [{"uuid": str(uuid.uuid4()), "address": i["mac_address"], "extra": {},
              "local_link_connection": {}, "physical_network": None, "pxe_enabled": True}
             for i in rep["inventory"]["interfaces"]]
    return Facts(node=node, inventory=rep["inventory"], plugin_data=plugin_data, ports=ports)


async def _runs(rules: list[Rule], the_facts: Facts, n: int, options: dict[str, Any]
                ) -> Outcome:
    outcome = None
    for _ in range(n):
        outcome = await apply_rules(rules, the_facts, mask=MaskPolicy.ALWAYS, **options)
    assert outcome is not None
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=100)
    parser.add_argument("--full", action="store_true", help="unmatched rules traced in full")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    rules = [parse_ironic({**body, "uuid": str(uuid.uuid4())})
             for body in benchrules.rules(args.rules)]
    the_facts = facts()
    compact = "compact" in inspect.signature(apply_rules).parameters and not args.full
    options = {"compact": True} if compact else {}
    outcome = asyncio.run(_runs(rules, the_facts, 5, options))
    times = []
    for _ in range(7):
        start = time.process_time()
        outcome = asyncio.run(_runs(rules, the_facts, 100, options))
        times.append((time.process_time() - start) / 100)
    start = time.process_time()
    for _ in range(100):
        text = json.dumps([t.to_dict() for t in outcome.traces])
    encode = (time.process_time() - start) / 100
    print(f"rules={args.rules} traces={'compact' if compact else 'full'}")
    print(f"  apply_rules          {min(times) * 1000:6.2f} ms per report (best of 7)")
    print(f"  traces to JSON       {encode * 1000:6.2f} ms, {len(text)} bytes")
    print(f"  matched              {sum(t.matched for t in outcome.traces)}, node patch "
          f"{[op['path'] for op in outcome.node_patch]}, traits {outcome.traits_add}")
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        asyncio.run(_runs(rules, the_facts, 100, options))
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
