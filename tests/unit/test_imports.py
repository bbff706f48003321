"""The import graph of src/ironsight: no cycles, and each package ("room") imports only what
docs/architecture.md allows it.

Every import statement counts, wherever it stands: at the top, inside a function, or under
`if TYPE_CHECKING:` (a cycle there is a cycle of the design even if Python never runs it).
Run this file alone to print the graph's cycles and the rooms' edges:
`.venv/bin/python tests/unit/test_imports.py`.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "ironsight"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in (SRC / PACKAGE).rglob("*.py")}


def _imported(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    """Absolute names an import statement refers to (modules, or names inside modules)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")
            base = base if is_package else base[:-1]
            base = base[:len(base) - node.level + 1]
            prefix = ".".join([*base, node.module] if node.module else base)
        else:
            prefix = node.module or ""
        yield prefix
        yield from (f"{prefix}.{alias.name}" for alias in node.names)


def imports_of(module: str, path: Path) -> set[str]:
    """Every name `module` imports, ours resolved to the module that defines it."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        found.update(_imported(node, module, path.name == "__init__.py"))
    return found


def graph() -> dict[str, set[str]]:
    """Our modules and the modules of ours each imports (the most specific one named)."""
    known = modules()
    edges: dict[str, set[str]] = {}
    for module, path in known.items():
        targets = set()
        for name in imports_of(module, path):
            if not name.startswith(PACKAGE):
                continue
            while name not in known and "." in name:
                name = name.rsplit(".", 1)[0]
            if name in known and name != module:
                targets.add(name)
        edges[module] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm,
    iterative), each as one cycle through its members."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(_cycle_through(sorted(members), edges))
    return found


def _cycle_through(members: list[str], edges: dict[str, set[str]]) -> list[str]:
    """One concrete cycle from the first member back to it (breadth-first), for the report."""
    start, inside = members[0], set(members)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(edges[node] & inside):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return members


def room(module: str) -> str:
    """The package a module belongs to, at the depth architecture.md speaks of."""
    parts = module.split(".")
    if parts[1:2] in (["baremetal"], ["discoverd"]) and len(parts) > 3:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


# room -> rooms (prefixes) it must not import; see docs/architecture.md.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "ironsight.common": ("ironsight.baremetal", "ironsight.discoverd", "ironsight.cli",
                         "ironsight.client", "ironsight.lab", "ironsight.agent",
                         "ironsight.ramdisk"),
    "ironsight.baremetal": ("ironsight.discoverd", "ironsight.cli", "ironsight.client",
                            "ironsight.lab"),
    "ironsight.discoverd": ("ironsight.baremetal", "ironsight.cli", "ironsight.client",
                            "ironsight.lab"),
    "ironsight.baremetal.drivers": ("ironsight.baremetal.db", "ironsight.baremetal.conductor",
                                    "ironsight.baremetal.api", "ironsight.baremetal.service",
                                    "ironsight.common.db"),
    "ironsight.baremetal.conductor": ("ironsight.baremetal.api",
                                      "ironsight.baremetal.service"),
    "ironsight.baremetal.api": ("ironsight.baremetal.db", "ironsight.baremetal.service",
                                "ironsight.common.db"),
    # the console reads and acts through the API (in-process) and discoverd's client only
    "ironsight.baremetal.console": ("ironsight.baremetal.db", "ironsight.baremetal.conductor",
                                    "ironsight.baremetal.api", "ironsight.baremetal.service",
                                    "ironsight.common.db"),
    "ironsight.discoverd.api": ("ironsight.discoverd.service", "ironsight.discoverd.db"),
    "ironsight.discoverd.plugins": ("ironsight.discoverd.api", "ironsight.discoverd.service",
                                    "ironsight.discoverd.node_cache",
                                    "ironsight.discoverd.ironic", "ironsight.common.db"),
    "ironsight.discoverd.rules": ("ironsight.discoverd.api", "ironsight.discoverd.service",
                                  "ironsight.discoverd.node_cache", "ironsight.discoverd.ironic",
                                  "ironsight.discoverd.db", "ironsight.common.db"),
    "ironsight.client": ("ironsight.cli", "ironsight.lab", "ironsight.baremetal",
                         "ironsight.discoverd.service", "ironsight.discoverd.api"),
    "ironsight.lab": ("ironsight.cli", "ironsight.baremetal", "ironsight.discoverd.service"),
    "ironsight.ramdisk": ("ironsight.baremetal", "ironsight.discoverd", "ironsight.cli",
                          "ironsight.client", "ironsight.lab"),
}
# Third-party packages a room must not import.
FORBIDDEN_LIBRARIES: dict[str, tuple[str, ...]] = {
    "ironsight.baremetal.drivers": ("sqlalchemy", "alembic"),
    "ironsight.baremetal.api": ("sqlalchemy", "alembic"),
    "ironsight.baremetal.console": ("sqlalchemy", "alembic"),
    "ironsight.discoverd.api": ("sqlalchemy", "alembic"),
    "ironsight.discoverd.plugins": ("sqlalchemy", "starlette", "aiohttp", "httpx"),
    "ironsight.discoverd.rules": ("sqlalchemy", "starlette", "aiohttp", "httpx"),
    "ironsight.common.api.errors": ("starlette",),  # clients import it
    "ironsight.common.api.pagination": ("starlette",),
}


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(edges.items()):
        for rule_room, banned in FORBIDDEN.items():
            if not _within(module, rule_room):
                continue
            for target in sorted(targets):
                if any(_within(target, b) for b in banned) and not _within(target, rule_room):
                    found.append(f"{module} imports {target} ({rule_room} may not)")
    return found


def library_violations() -> list[str]:
    found = []
    for module, path in sorted(modules().items()):
        top = {name.split(".")[0] for name in imports_of(module, path)}
        for rule_room, banned in FORBIDDEN_LIBRARIES.items():
            if _within(module, rule_room):
                found += [f"{module} imports {lib} ({rule_room} may not)"
                          for lib in sorted(top & set(banned))]
        if _within(module, "ironsight.agent"):  # it runs inside the ramdisk: stdlib only
            foreign = sorted(t for t in top if t and t not in sys.stdlib_module_names
                             and t not in ("ironsight", "__future__"))
            found += [f"{module} imports {lib} (the agent uses the standard library only)"
                      for lib in foreign]
            found += [f"{module} imports {t}" for t in sorted(imports_of(module, path))
                      if t.startswith("ironsight.") and not _within(t, "ironsight.agent")]
    return found


def test_the_import_graph_has_no_cycles() -> None:
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c", "a"]]


def test_imports_under_type_checking_and_in_functions_count(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from ironsight.x import Y\n"
                    "def f():\n    import ironsight.z\n")
    assert {"ironsight.x.Y", "ironsight.z"} <= imports_of("ironsight.m", path)


def test_each_room_imports_only_what_the_architecture_allows() -> None:
    found = violations(graph())
    assert not found, "\n".join(found)


def test_no_room_imports_a_library_it_must_not() -> None:
    found = library_violations()
    assert not found, "\n".join(found)


def test_only_the_server_command_imports_a_service() -> None:
    services = ("ironsight.baremetal.service", "ironsight.discoverd.service")
    found = [f"{module} imports {target}" for module, targets in graph().items()
             for target in targets if target in services and module != "ironsight.cli.server"]
    assert not found, "\n".join(found)


def main() -> None:
    edges = graph()
    rooms: dict[str, set[str]] = defaultdict(set)
    for module, targets in edges.items():
        rooms[room(module)].update(room(t) for t in targets if room(t) != room(module))
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} imports of our own")
    found = cycles(edges)
    print(f"cycles: {len(found)}")
    for cycle in found:
        print("  " + " -> ".join(cycle))
    print("rooms and the rooms they import:")
    for name in sorted(rooms):
        print(f"  {name}: {', '.join(sorted(rooms[name])) or '-'}")


if __name__ == "__main__":
    main()
