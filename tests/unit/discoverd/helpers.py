"""Stand-ins and builders shared by discoverd's unit tests.

`FakeBareMetal` stands in for the bare-metal API behind the `BareMetal` protocol
(ironsight/discoverd/ironic.py), the seam discoverd is built around: these are unit tests of
discoverd alone, so a small in-memory double that records every call is legitimate here. The
real bare-metal service, over real HTTP, is exercised by tests/functional/discoverd/.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ironsight.common import config
from ironsight.common.config import Config
from ironsight.common.workers import WorkerPool
from ironsight.discoverd import formats
from ironsight.discoverd.builtin_rules import BuiltInRules
from ironsight.discoverd.introspect import Introspector
from ironsight.discoverd.ironic import IronicError
from ironsight.discoverd.members import Members
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.capabilities import Capabilities
from ironsight.discoverd.plugins.ports import Ports
from ironsight.discoverd.plugins.ramdisk_error import RamdiskError
from ironsight.discoverd.plugins.root_disk import RootDiskSelection
from ironsight.discoverd.plugins.scheduler import Scheduler
from ironsight.discoverd.plugins.validate_interfaces import ValidateInterfaces
from ironsight.discoverd.process import Processor
from ironsight.discoverd.recovery import Recovery
from ironsight.discoverd.rule_runner import RuleRunner, patched
from ironsight.discoverd.rule_store import RuleSet, RuleStore
from ironsight.discoverd.rules.model import ApiCall

UUID1 = "11111111-1111-4111-8111-111111111111"
UUID2 = "22222222-2222-4222-8222-222222222222"
UUID3 = "33333333-3333-4333-8333-333333333333"
MAC1 = "52:54:00:00:00:01"
MAC2 = "52:54:00:00:00:02"
MAC3 = "52:54:00:00:00:03"
# TEST-NET addresses: numeric (resolved without DNS), not loopback, nothing answers there.
BMC1 = "192.0.2.1"
BMC2 = "192.0.2.2"
GIB = 1024**3

_PORT_IDS = itertools.count(1)


def conf_with(tmp_path: Path, **sections: dict[str, str]) -> config.Config:
    """The embedded defaults, state in `tmp_path`, plus `sections` ({option: value}).
    Tokenless reports are allowed unless `sections` says otherwise: the reports these tests
    post come from no booted node (test_callback_token.py tests the tokens)."""
    introspection = {"allow_tokenless_reports": "true", **sections.pop("introspection", {})}
    return config.load(overrides={"DEFAULT": {"state_dir": str(tmp_path)},
                                  "introspection": introspection, **sections})


def context(report: dict[str, Any], *, node: dict[str, Any] | None = None,
            ports: tuple[dict[str, Any], ...] = (),
            processing: dict[str, str] | None = None) -> ProcessingContext:
    """What a hook sees: the validated `report`, the node and its ports, and the defaults
    with `[processing]` options `processing`."""
    conf = config.load(overrides={"processing": dict(processing or {})})
    return ProcessingContext(conf, formats.normalize(report), node=dict(node or {}),
                             ports=list(ports))


def unvalidated(report: dict[str, Any], **processing: str) -> ProcessingContext:
    """What a hook sees of `report` *without* formats.py's checks. discoverd refuses such
    reports (400) before any hook runs; a hook does not rely on that, and its tests say
    what it does with data that was never validated."""
    conf = config.load(overrides={"processing": dict(processing)})
    return ProcessingContext(conf, copy.deepcopy(report), node={"properties": {}})


def agent_report(macs: tuple[str, ...] = (MAC1,), *, bmc: str | None = BMC1,
                 pxe: str | None = MAC1, ips: dict[str, str] | None = None, cpus: Any = 4,
                 arch: Any = "x86_64", memory_mb: Any = 8192,
                 disks_gib: tuple[int, ...] = (100,), boot_mode: str | None = "bios",
                 flags: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    """An ironic-python-agent report: one NIC per MAC (named eth0...), the PXE NIC with an
    IPv4 address unless `ips` says otherwise, and the first disk as `root_disk`."""
    if ips is None:
        ips = {pxe: "10.0.0.10"} if pxe else {}
    disks = [{"name": f"/dev/sd{chr(97 + i)}", "size": gib * GIB, "serial": f"SER{i}",
              "model": f"MODEL{i}", "vendor": "ACME", "rotational": i > 0}
             for i, gib in enumerate(disks_gib)]
    data: dict[str, Any] = {
        "inventory": {
            "interfaces": [{"name": f"eth{i}", "mac_address": mac, "ipv4_address": ips.get(mac)}
                           for i, mac in enumerate(macs)],
            "cpu": {"count": cpus, "architecture": arch, "flags": list(flags)},
            "memory": {"physical_mb": memory_mb},
            "disks": disks,
            "bmc_address": bmc,
            "boot": {"current_boot_mode": boot_mode, "pxe_interface": pxe},
        },
        "root_disk": disks[0] if disks else None,
    }
    data.update(extra)
    return data


def legacy_report(macs: tuple[str, ...] = (MAC1,), *, bmc: str | None = BMC1,
                  **fields: Any) -> dict[str, Any]:
    """The legacy discoverd ramdisk's flat report."""
    data: dict[str, Any] = {"cpus": 2, "cpu_arch": "x86_64", "memory_mb": 4096, "local_gb": 40,
                            "interfaces": {f"eth{i}": {"mac": mac, "ip": f"10.1.0.{i + 1}"}
                                           for i, mac in enumerate(macs)}}
    if bmc is not None:
        data["ipmi_address"] = bmc
    data.update(fields)
    return data


class FakeBareMetal:
    """The bare-metal API in memory: nodes by UUID, their ports, every call in `calls`.

    `fail[method] = exc` makes every call of that method raise `exc`; `taken_macs` are MACs
    a port may not be created for (409, as a MAC of another node); `power_answers` are what
    successive `get_power` calls return (the last one repeats; empty: the node's state)."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}
        self.ports: dict[str, list[dict[str, Any]]] = {}
        self.calls: list[tuple[Any, ...]] = []
        self.fail: dict[str, Exception] = {}
        self.taken_macs: set[str] = set()
        self.power_valid: tuple[bool, str | None] = (True, None)
        self.power_answers: list[dict[str, Any]] = []
        self.history: dict[str, list[tuple[str, str]]] = {}  # uuid -> (severity, event)

    def add_node(self, uuid: str = UUID1, *, name: str | None = None,
                 provision_state: str = "manageable", maintenance: bool = False,
                 driver_info: dict[str, Any] | None = None,
                 properties: dict[str, Any] | None = None, macs: tuple[str, ...] = (MAC1,),
                 pxe_enabled: bool = True) -> str:
        self.nodes[uuid] = {"uuid": uuid, "name": name, "provision_state": provision_state,
                            "maintenance": maintenance,
                            "driver_info": {"ipmi_address": BMC1} if driver_info is None
                            else driver_info,
                            "properties": dict(properties or {}), "power_state": "power off",
                            "traits": [], "extra": {}, "resource_class": None}
        self.ports[uuid] = [self._port(mac, pxe_enabled) for mac in macs]
        return uuid

    @staticmethod
    def _port(mac: str, pxe_enabled: bool) -> dict[str, Any]:
        return {"uuid": f"port-{next(_PORT_IDS)}", "address": mac, "pxe_enabled": pxe_enabled}

    def names(self) -> list[str]:
        """The methods called, in order."""
        return [call[0] for call in self.calls]

    def _record(self, method: str, *args: Any) -> None:
        self.calls.append((method, *args))
        if method in self.fail:
            raise self.fail[method]

    def _node(self, ident: str) -> dict[str, Any]:
        for node in self.nodes.values():
            if ident in (node["uuid"], node["name"]):
                return node
        raise IronicError(f"Node {ident} could not be found.", code=404)

    # --- the BareMetal protocol -------------------------------------------------------------

    async def get_node(self, ident: str, fields: str | None = None) -> dict[str, Any]:
        self._record("get_node", ident)
        return copy.deepcopy(self._node(ident))

    async def get_power(self, uuid: str) -> dict[str, Any]:
        self._record("get_power", uuid)
        if self.power_answers:
            return dict(self.power_answers.pop(0) if len(self.power_answers) > 1
                        else self.power_answers[0])
        node = self._node(uuid)
        return {"uuid": uuid, "power_state": node["power_state"], "target_power_state": None,
                "last_error": None}

    async def validate_power(self, uuid: str) -> tuple[bool, str | None]:
        self._record("validate_power", uuid)
        return self.power_valid

    async def list_ports(self, uuid: str) -> list[dict[str, Any]]:
        self._record("list_ports", uuid)
        return copy.deepcopy(self.ports.get(uuid, []))

    async def node_with_ports(self, uuid: str, fields: str | None = None
                              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        self._record("node_with_ports", uuid)
        return copy.deepcopy(self._node(uuid)), copy.deepcopy(self.ports.get(uuid, []))

    async def list_all_port_macs(self) -> set[str]:
        self._record("list_all_port_macs")
        return {p["address"] for ports in self.ports.values() for p in ports}

    async def set_boot_device_pxe(self, uuid: str) -> None:
        self._record("set_boot_device_pxe", uuid)

    async def set_power(self, uuid: str, target: str) -> None:
        self._record("set_power", uuid, target)
        self._node(uuid)["power_state"] = "power off" if target == "power off" else "power on"

    async def patch_node(self, uuid: str, patch: list[dict[str, Any]]) -> None:
        self._record("patch_node", uuid, patch)
        node = self._node(uuid)
        node.update(patched(node, patch))

    async def create_port(self, uuid: str, mac: str, pxe_enabled: bool,
                          fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
        # recorded with its fields only when it has some: most tests create plain ports
        self._record("create_port", uuid, mac, pxe_enabled, *([dict(fields)] if fields else []))
        if mac in self.taken_macs:
            raise IronicError(f"A port with MAC address {mac} already exists.", code=409)
        port = {**self._port(mac, pxe_enabled), **(fields or {})}
        self.ports.setdefault(uuid, []).append(port)
        return dict(port)

    async def patch_port(self, port_uuid: str, patch: list[dict[str, Any]]) -> None:
        self._record("patch_port", port_uuid, patch)
        for ports in self.ports.values():
            for port in ports:
                if port["uuid"] == port_uuid:
                    port.update(patched(port, patch))

    async def add_trait(self, uuid: str, trait: str) -> None:
        self._record("add_trait", uuid, trait)
        traits = self._node(uuid)["traits"]
        if trait not in traits:
            traits.append(trait)

    async def remove_trait(self, uuid: str, trait: str) -> None:
        self._record("remove_trait", uuid, trait)
        traits = self._node(uuid)["traits"]
        if trait in traits:
            traits.remove(trait)

    async def apply_changes(self, uuid: str, patch: list[dict[str, Any]], *,
                            add_traits: Sequence[str] = (), remove_traits: Sequence[str] = (),
                            event: str | None = None,
                            port_patches: Mapping[str, list[dict[str, Any]]] | None = None
                            ) -> None:
        """All of it or nothing, as the bare-metal API's one transaction; with no trait,
        event or port patch, a plain PATCH (as Ironic.apply_changes). Port patches are
        recorded as `patch_port` calls first (what tests look for), then applied."""
        for port_uuid, ops in (port_patches or {}).items():
            await self.patch_port(port_uuid, ops)
        if not add_traits and not remove_traits and event is None and not port_patches:
            await self.patch_node(uuid, patch)
            return
        self._record("apply_changes", uuid, patch, list(add_traits), list(remove_traits),
                     event)
        node = self._node(uuid)
        node.update(patched(node, patch))
        node["traits"] = [t for t in [*node["traits"], *(t for t in add_traits
                                                         if t not in node["traits"])]
                          if t not in remove_traits]
        if event is not None:
            self.history.setdefault(uuid, []).append(("INFO", event))

    async def add_history(self, uuid: str, event: str, severity: str = "INFO") -> None:
        self._record("add_history", uuid, event)
        self.history.setdefault(uuid, []).append((severity, event))

    async def delete_port(self, port_uuid: str) -> None:
        self._record("delete_port", port_uuid)
        for ports in self.ports.values():
            ports[:] = [p for p in ports if p["uuid"] != port_uuid]


class FastClock:
    """Stands in for the `asyncio` module inside lifecycle.py: its sleeps return at once
    (recorded in `sleeps`) and move the clock the power-off wait reads, so a wait of minutes
    takes no time. Everything else is the real event loop's."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)
        self.now += delay
        await asyncio.sleep(0)

    def get_running_loop(self) -> _Loop:
        return _Loop(self, asyncio.get_running_loop())


class _Loop:
    def __init__(self, clock: FastClock, loop: asyncio.AbstractEventLoop) -> None:
        self._clock = clock
        self._loop = loop

    def time(self) -> float:
        return self._clock.now

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loop, name)


# The default chain ([processing] processing_hooks), built without the entry-point scan that
# load_hooks does (plugins/test_base.py covers that).
DEFAULT_HOOKS: tuple[type[ProcessingHook], ...] = (
    RamdiskError, ValidateInterfaces, RootDiskSelection, Scheduler, Capabilities, Ports)


@dataclass
class Discoverd:
    """discoverd's parts wired as the service wires them, on a fake bare-metal API."""

    conf: Config
    cache: NodeCache
    ironic: FakeBareMetal
    workers: WorkerPool
    introspector: Introspector
    processor: Processor
    recovery: Recovery
    clock: FastClock
    rules: RuleRunner
    notifications: list[None] = field(default_factory=list)  # calls of the PXE filter hook

    @classmethod
    def wire(cls, conf: Config, cache: NodeCache, clock: FastClock,
             workers_size: int = 100, api_call: ApiCall | None = None) -> Discoverd:
        ironic = FakeBareMetal()
        workers = WorkerPool(workers_size)
        notifications: list[None] = []

        async def on_change() -> None:
            notifications.append(None)

        introspector = Introspector(conf, cache, ironic, workers, on_change=on_change)
        rule_store = RuleStore(cache.db)
        built_in = BuiltInRules(conf.inspection_rules.built_in_rules)
        rules = RuleRunner(conf, RuleSet(rule_store, built_in), api_call=api_call)
        processor = Processor(conf, cache, ironic, [hook(conf) for hook in DEFAULT_HOOKS],
                              introspector, workers, rules=rules)
        members = Members(cache.db, cache.owner, conf.introspection.heartbeat_timeout)
        recovery = Recovery(conf, cache, introspector, processor, workers, members)
        return cls(conf, cache, ironic, workers, introspector, processor, recovery, clock,
                   rules, notifications)

    async def settle(self) -> None:
        """Wait until every background step (and those they spawn) has ended."""
        for _ in range(20):
            if not self.workers.busy:
                return
            await self.workers.drain(timeout=5)
        raise AssertionError("background steps keep spawning")

    async def state(self, uuid: str) -> str:
        return (await self.cache.get(uuid)).state

    async def error(self, uuid: str) -> str | None:
        return (await self.cache.get(uuid)).error


# The `build` fixture: build(workers_size=..., **sections) -> Discoverd
Build = Callable[..., Discoverd]
