"""NUMA topology in IPA's shape (`numa_topology`, its `numa-topology` collector):
`ram` per node (`size_kb`), `cpus` as physical cores per node with their `thread_siblings`,
and `nics` with their node, from `/sys/devices/system/node` and `/sys/class/net`.

A machine without node directories (a kernel without NUMA) has no topology: None, as IPA
sends nothing then. A NIC whose device has no `numa_node` is left out, as IPA does; one
that says -1 (no affinity) is kept with -1.
"""

from __future__ import annotations

import os

from .sysfs import join, listdir, read, read_int

NODES = "sys/devices/system/node"


def collect(root: str = "/") -> dict[str, object] | None:
    base = join(root, NODES)
    nodes = sorted((int(name[4:]), os.path.join(base, name)) for name in listdir(base)
                   if name.startswith("node") and name[4:].isdigit())
    if not nodes:
        return None
    return {"ram": [{"numa_node": node, "size_kb": _size_kb(path)} for node, path in nodes],
            "cpus": _cpus(nodes), "nics": _nics(root)}


def _size_kb(node_dir: str) -> int:
    """`Node 0 MemTotal:       12345 kB` from the node's own meminfo."""
    for line in (read(os.path.join(node_dir, "meminfo")) or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "MemTotal:" and fields[3].isdigit():
            return int(fields[3])
    raise ValueError(f"no MemTotal in {node_dir}/meminfo")


def _cpus(nodes: list[tuple[int, str]]) -> list[dict[str, object]]:
    cores: dict[tuple[int, int], list[int]] = {}
    for node, path in nodes:
        threads = sorted(int(name[3:]) for name in listdir(path)
                         if name.startswith("cpu") and name[3:].isdigit())
        for thread in threads:
            core = read_int(os.path.join(path, f"cpu{thread}", "topology", "core_id"))
            if core is None:
                raise ValueError(f"no core_id for cpu{thread} of node {node}")
            cores.setdefault((node, core), []).append(thread)
    return [{"cpu": core, "numa_node": node, "thread_siblings": siblings}
            for (node, core), siblings in cores.items()]


def _nics(root: str) -> list[dict[str, object]]:
    base = join(root, "sys/class/net")
    nics = []
    for name in listdir(base):
        node = read_int(os.path.join(base, name, "device", "numa_node"))
        if node is not None:
            nics.append({"name": name, "numa_node": node})
    return nics
