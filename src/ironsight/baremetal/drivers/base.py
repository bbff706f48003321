"""The driver contract: hardware types made of power, management and inspect interfaces.

Interfaces are async. Blocking work (pyghmi, which is synchronous) goes to threads of its
own (see ipminative.py); subprocesses (ipmitool) and SSH use asyncio directly, so no driver call
stalls the event loop. Every BMC call is bounded by a timeout and reports failure as a
`DriverError` whose message an operator can act on (it lands in `last_error`).
"""

from __future__ import annotations

import abc
import datetime as dt
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ironsight.baremetal import fields
from ironsight.common.config import Config
from ironsight.common.exceptions import (
    InvalidParameterValue,
    MissingParameterValue,
    UnsupportedDriverExtension,
)

BOOT_DEVICE_PXE = "pxe"
BOOT_DEVICE_DISK = "disk"
BOOT_DEVICES = (BOOT_DEVICE_PXE, BOOT_DEVICE_DISK)


def check_boot_device(device: str) -> None:
    if device not in BOOT_DEVICES:
        raise InvalidParameterValue(
            f"unsupported boot device {device!r}; expected one of {', '.join(BOOT_DEVICES)}")


@dataclass(frozen=True)
class NodeContext:
    """What a driver sees of a node: identity and its (unmasked) driver_info."""

    uuid: str
    driver: str
    driver_info: Mapping[str, Any]
    power_state: str | None = None
    name: str | None = None
    provision_state: str | None = None
    maintenance: bool = False
    # the node's port MACs, when the conductor read them for a hands-off start (sent along,
    # so that the inspection service need not read them back through the API)
    macs: tuple[str, ...] | None = None

    def __str__(self) -> str:
        return self.uuid

    @classmethod
    def of(cls, node: Mapping[str, Any]) -> NodeContext:
        """The context of a full node row."""
        return cls(uuid=node["uuid"], driver=node["driver"],
                   driver_info=node["driver_info"] or {}, power_state=node["power_state"],
                   name=node.get("name"), provision_state=node.get("provision_state"),
                   maintenance=bool(node.get("maintenance")))


class BaseInterface(abc.ABC):
    """Interfaces are built once per conductor with the configuration."""

    # driver_info keys this interface reads -> description (starts with "Required."/"Optional.")
    properties: Mapping[str, str] = {}
    # driver_info keys holding secrets, masked in API output and never logged
    secret_properties: frozenset[str] = frozenset()

    def __init__(self, conf: Config) -> None:
        self.conf = conf

    @abc.abstractmethod
    def validate(self, node: NodeContext) -> None:
        """Check driver_info without touching the hardware; raise InvalidParameterValue
        or MissingParameterValue naming the field."""


class PowerInterface(BaseInterface):
    # Whether the periodic power-state sync should read this interface (False when the
    # stored state is the only truth, as for fake power).
    syncable: bool = True

    @abc.abstractmethod
    async def get_power_state(self, node: NodeContext) -> str:
        """'power on' or 'power off' (states.POWER_ON / POWER_OFF)."""

    @abc.abstractmethod
    async def set_power_state(self, node: NodeContext, target: str, timeout: float) -> None:
        """Bring the node to `target` ('power on', 'power off' or 'rebooting') and return
        once the BMC reports the new state (for 'rebooting': power on), or raise
        PowerStateFailure within `timeout` seconds."""


class ManagementInterface(BaseInterface):
    def supported_boot_devices(self, node: NodeContext) -> list[str]:
        return list(BOOT_DEVICES)

    @abc.abstractmethod
    async def set_boot_device(self, node: NodeContext, device: str,
                              persistent: bool = False) -> None:
        """Boot from `device` ('pxe' or 'disk') next time (or always, if persistent)."""

    @abc.abstractmethod
    async def get_boot_device(self, node: NodeContext) -> dict[str, Any]:
        """{'boot_device': 'pxe'|'disk'|None, 'persistent': bool|None}"""

    # Boot mode and Secure Boot (API 1.76), indicators (LEDs, API 1.63), NMI: none unless
    # an interface has them, as in Ironic, whose answer names the missing method.

    async def set_boot_mode(self, node: NodeContext, mode: str) -> None:
        """Boot in `mode` ('bios' or 'uefi') from now on."""
        raise _unsupported(node, "set_boot_mode")

    async def set_secure_boot_state(self, node: NodeContext, enabled: bool) -> None:
        raise _unsupported(node, "set_secure_boot_state")

    async def inject_nmi(self, node: NodeContext) -> None:
        raise _unsupported(node, "inject_nmi")

    async def get_virtual_media(self, node: NodeContext) -> list[dict[str, Any]]:
        """What the BMC has inserted: [{'device_type', 'image_url', 'inserted'}...]."""
        raise _unsupported(node, "get_virtual_media")

    async def supported_indicators(self, node: NodeContext) -> dict[str, dict[str, Any]]:
        """{component: {indicator: {'readonly': bool, 'states': [...]}}}"""
        raise _unsupported(node, "get_supported_indicators")

    async def get_indicator_state(self, node: NodeContext, component: str,
                                  indicator: str) -> str:
        """The indicator's state ('on', 'off', 'blinking' or 'unknown'); InvalidParameterValue
        naming an unknown component or indicator."""
        raise _unsupported(node, "get_indicator_state")

    async def set_indicator_state(self, node: NodeContext, component: str, indicator: str,
                                  state: str) -> None:
        raise _unsupported(node, "set_indicator_state")


def _unsupported(node: NodeContext, what: str) -> UnsupportedDriverExtension:
    return UnsupportedDriverExtension(
        f"Driver {node.driver} does not support {what} (disabled or not implemented).")


class ConsoleInterface(BaseInterface):
    """A node's remote (serial) console. The conductor records whether it is enabled
    (`console_enabled`); the interface only starts, stops and describes it."""

    name: ClassVar[str]

    @abc.abstractmethod
    async def start_console(self, node: NodeContext) -> None:
        """Start the console; no error if it runs already."""

    @abc.abstractmethod
    async def stop_console(self, node: NodeContext) -> None:
        """Stop the console; no error if it is stopped."""

    @abc.abstractmethod
    async def get_console(self, node: NodeContext) -> dict[str, Any]:
        """How a client reaches the running console (Ironic's `console_info`)."""


@dataclass(frozen=True)
class VendorMethod:
    """One vendor passthru method, described as `GET .../vendor_passthru/methods` shows it.
    `run(node, args)` gets the call's body (already checked by the interface's `validate`)
    and returns what a synchronous call answers."""

    name: str
    run: Callable[[NodeContext, Mapping[str, Any]], Awaitable[Any]]
    http_methods: tuple[str, ...] = ("POST",)
    async_call: bool = True  # 202 at once, run in a worker; else 200 with what it returns
    description: str = ""
    attach: bool = False
    require_exclusive_lock: bool = True

    def metadata(self) -> dict[str, Any]:
        return {"http_methods": list(self.http_methods), "async": self.async_call,
                "description": self.description, "attach": self.attach,
                "require_exclusive_lock": self.require_exclusive_lock}


def vendor_method(vendor: VendorInterface | None, name: str,
                  http_method: str) -> VendorMethod:
    """The method a call names, or Ironic's 400 for an unknown one (every name, without a
    vendor interface) or HTTP verb."""
    found = vendor.methods().get(name) if vendor is not None else None
    if found is None:
        raise InvalidParameterValue(f"No handler for method {name}")
    if http_method.upper() not in found.http_methods:
        raise InvalidParameterValue(
            f"The method {name} does not support HTTP {http_method.upper()}")
    return found


class VendorInterface(BaseInterface):
    """Vendor passthru: named methods a node's driver adds to the API."""

    name: ClassVar[str]

    def methods(self) -> Mapping[str, VendorMethod]:
        """The node methods, by name (none by default)."""
        return {}

    def validate(self, node: NodeContext, method: str | None = None,
                 args: Mapping[str, Any] | None = None) -> None:
        """Without `method`: the node's driver_info. With it: the call's arguments, raising
        MissingParameterValue or InvalidParameterValue naming the argument."""


@dataclass(frozen=True)
class Findings:
    """What an interface that inspects by itself (out of band) found: the conductor merges
    `properties` into the node's, creates a port for each MAC the node has none for, and
    records the boot mode in the node's capabilities."""

    properties: dict[str, Any] = field(default_factory=dict)
    macs: list[str] = field(default_factory=list)
    boot_mode: str | None = None  # "bios", "uefi" or None (the BMC does not say)
    missing: list[str] = field(default_factory=list)  # what the hardware did not report


@dataclass(frozen=True)
class InspectOutcome:
    """What an inspect interface tells the conductor about one node. The conductor applies it:
    the state change, `last_error` and the history belong to the conductor."""

    state: str  # DONE, WAITING, FAILED, LOST or RUNNING
    # FAILED: the node's last_error, as the operator reads it; LOST: why, and the last_error
    # if the conductor runs out of attempts
    error: str | None = None
    findings: Findings | None = None  # DONE by an interface that inspects by itself

    DONE: ClassVar[str] = "done"
    WAITING: ClassVar[str] = "waiting"
    FAILED: ClassVar[str] = "failed"
    # The start did not reach the outside service, or it has no record of the inspection:
    # the conductor starts it again (up to the interface's `start_attempts`).
    LOST: ClassVar[str] = "lost"
    # A start made again found the inspection under way in the service already.
    RUNNING: ClassVar[str] = "running"

    @classmethod
    def done(cls, findings: Findings | None = None) -> InspectOutcome:
        return cls(cls.DONE, findings=findings)

    @classmethod
    def waiting(cls) -> InspectOutcome:
        return cls(cls.WAITING)

    @classmethod
    def failed(cls, error: str) -> InspectOutcome:
        return cls(cls.FAILED, error)

    @classmethod
    def lost(cls, why: str) -> InspectOutcome:
        return cls(cls.LOST, why)

    @classmethod
    def running(cls, note: str) -> InspectOutcome:
        return cls(cls.RUNNING, note)


@dataclass(frozen=True)
class WaitingNode:
    """A node in `inspect wait`, as a status poll sees it."""

    uuid: str
    waiting_since: dt.datetime | None  # when it entered `inspect wait`
    inspection_started_at: dt.datetime | None
    # Its start was lost (or cut short by a dead conductor) and is due to be made again,
    # unless the service has this inspection after all.
    start_lost: bool = False


class InspectInterface(BaseInterface):
    """Inspection of a node's hardware. The interface only talks to what inspects (a
    service, a BMC); it returns outcomes and never changes the node itself."""

    name = "inspect"
    # An outside service finishes the inspection and acts on the node through the API
    # meanwhile: the conductor learns the end through `poll`. Unless `conductor_boots`, the
    # service acts on the node through the API (boot device, power), so the conductor moves
    # the node to `inspect wait` and releases its lock *before* `start`.
    hands_off: bool = False
    # With `hands_off`: the conductor itself boots the node into the inspection ramdisk
    # (boot device PXE, reboot) once `start` returned WAITING, still under the node's lock,
    # and, with `power_off`, powers it off when the inspection ends; the outside service
    # leaves power alone (Ironic's "managed boot").
    conductor_boots: bool = False
    power_off: bool = True
    # Seconds between `poll` passes (one for all nodes of all hardware types using this
    # interface class); 0: never polled.
    poll_period: float = 0.0
    # Seconds to the next pass while the last one found an inspection near its end (WAITING
    # outcomes: the service is working on a report); 0: always `poll_period`.
    busy_poll_period: float = 0.0
    # Whether `continue_inspection` takes ramdisk reports posted to the bare-metal API.
    accepts_reports: bool = False
    # How often a hands-off start is made in all when it is LOST, and how long after one the
    # conductor waits before it starts again.
    start_attempts: int = 1
    start_grace: dt.timedelta = dt.timedelta(0)
    # Whether `inventory` reads the findings of inspections from where they are kept.
    keeps_inventory: bool = False

    @abc.abstractmethod
    async def start(self, node: NodeContext, *, again: bool = False) -> InspectOutcome:
        """Inspect, or start inspecting: DONE when finished here, WAITING when the outside
        service reports later, FAILED with the reason, LOST when the service could not be
        reached (the conductor starts again). An IronsightError counts as FAILED. `again`: a
        start made again after a lost one; RUNNING when the service has the inspection in
        hand already (the lost start got through after all): nothing to start or boot."""

    async def abort(self, node: NodeContext, *, reason: str | None = None) -> bool:
        """Stop what `start` began elsewhere (`reason`: None, an operator's abort; "timeout",
        the conductor's wait for it timed out; "boot_failed", the conductor could not boot
        the node). False when that cannot be reached now: the conductor remembers the
        node (`pending_abort_key`) and asks again each poll pass."""
        return True

    async def poll(self, waiting: Sequence[WaitingNode]) -> dict[str, InspectOutcome]:
        """The outcome of each waiting node whose inspection ended (DONE or FAILED), that
        the service has no record of (LOST), or whose report the service has and is working
        on (WAITING: the node did boot), by UUID; nodes still waiting for their ramdisk are
        left out. Raising means "ask again next pass"."""
        return {}

    async def continue_inspection(self, report: dict[str, Any],
                                  token: str | None = None) -> dict[str, Any]:
        """Hand over a ramdisk's report posted to the bare-metal API (`accepts_reports`),
        with the callback token it came with (None: none)."""
        raise UnsupportedDriverExtension(f"The {self.name} inspect interface takes no reports.")

    async def ramdisk_params(self, node: NodeContext) -> str:
        """The kernel parameters of a ramdisk the conductor boots from a medium (virtual
        media) for the started inspection: where to report, with a new callback token. A
        secret: never logged."""
        raise UnsupportedDriverExtension(
            f"The {self.name} inspect interface cannot boot a ramdisk from a medium.")

    async def inventory(self, uuid: str) -> dict[str, Any] | None:
        """The latest inspection's findings about node `uuid`, as `GET /v1/nodes/{node}/
        inventory` shows them (`inventory`, `plugin_data`); None when none are kept."""
        return None

    async def add_phases(self, node: NodeContext, steps: Sequence[dict[str, Any]]) -> None:
        """Tell the service steps of the attempt the conductor took (power actions, virtual
        media), each `{"phase", "at", "details"}`, for the node's timeline."""

    async def ramdisk_log(self, uuid: str, attempt: int | None) -> dict[str, Any] | None:
        """The ramdisk's log of an attempt (default: the latest), `{attempt, stage,
        updated_at, log}`; None when this interface keeps none."""
        return None

    async def attempts(self, uuid: str) -> list[dict[str, Any]] | None:
        """The node's kept inspection attempts with their timelines (discoverd's
        `diagnosis.py` shapes), oldest first; None when this interface records none."""
        return None

    async def close(self) -> None:
        """Release what the interface holds (connections) when the conductor stops."""


class BootInterface(BaseInterface):
    """How the inspection ramdisk reaches a node that the conductor boots, when not over the
    network (PXE through discoverd, the default: no boot interface object). The conductor
    publishes the medium and owns everything stored; the interface only talks to the BMC."""

    name: str = ""
    # the one-time boot device the conductor sets after `insert`
    boot_device: str = ""

    @abc.abstractmethod
    async def insert(self, node: NodeContext, url: str) -> None:
        """Put the medium at `url` in the node's virtual drive (replacing what is there)."""

    @abc.abstractmethod
    async def eject(self, node: NodeContext) -> None:
        """Take the medium out; nothing inserted is not an error."""


@dataclass(frozen=True)
class HardwareType:
    """A named combination of interface classes; loaded through entry points."""

    name: str
    description: str
    power: Callable[[Config], PowerInterface]
    management: Callable[[Config], ManagementInterface]
    inspect: Callable[[Config], InspectInterface] | None = None
    # the default implementation name of each interface (all of Ironic's, see interfaces.py)
    interface_names: Mapping[str, str] = field(default_factory=dict)
    # other implementation names a node of this type may set (Ironic's fake and no-* ones)
    also_accepted: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Whether the provision verbs beyond inspection (deploy, clean, rescue, service, adopt)
    # run on this type: instantly, as Ironic's fake interfaces do.
    provisions: bool = False
    # The console and vendor implementations a node may choose (its console_interface,
    # vendor_interface), by name; a name accepted but not here (no-console, no-vendor) has
    # none.
    consoles: Mapping[str, Callable[[Config], ConsoleInterface]] = field(default_factory=dict)
    vendors: Mapping[str, Callable[[Config], VendorInterface]] = field(default_factory=dict)
    # Other inspect implementations a node may choose (its inspect_interface), by name; the
    # default one is `inspect`.
    inspects: Mapping[str, Callable[[Config], InspectInterface]] = field(default_factory=dict)
    # Boot implementations (its boot_interface) that boot the ramdisk from a medium, by name;
    # a name accepted but not here boots it over the network (PXE through discoverd).
    boots: Mapping[str, Callable[[Config], BootInterface]] = field(default_factory=dict)


@dataclass
class Driver:
    """A loaded hardware type: its interfaces, instantiated for this conductor."""

    hw: HardwareType
    power: PowerInterface
    management: ManagementInterface
    inspect: InspectInterface | None
    consoles: Mapping[str, ConsoleInterface] = field(default_factory=dict)
    vendors: Mapping[str, VendorInterface] = field(default_factory=dict)
    inspects: Mapping[str, InspectInterface] = field(default_factory=dict)
    boots: Mapping[str, BootInterface] = field(default_factory=dict)

    @classmethod
    def load(cls, hw: HardwareType, conf: Config) -> Driver:
        return cls(hw=hw, power=hw.power(conf), management=hw.management(conf),
                   inspect=hw.inspect(conf) if hw.inspect is not None else None,
                   consoles={n: make(conf) for n, make in hw.consoles.items()},
                   vendors={n: make(conf) for n, make in hw.vendors.items()},
                   inspects={n: make(conf) for n, make in hw.inspects.items()},
                   boots={n: make(conf) for n, make in hw.boots.items()})

    def boot_for(self, node: Mapping[str, Any]) -> BootInterface | None:
        """The node's medium boot interface; None: the ramdisk boots over the network."""
        return self.boots.get(node.get("boot_interface") or "")

    def inspect_for(self, node: Mapping[str, Any]) -> InspectInterface | None:
        """The node's inspect interface: the one its inspect_interface names, else the
        hardware type's default."""
        return self.inspects.get(node.get("inspect_interface") or "") or self.inspect

    @property
    def name(self) -> str:
        return self.hw.name

    def console_for(self, node: Mapping[str, Any]) -> ConsoleInterface:
        """The node's console, or Ironic's 400 when its console_interface has none."""
        console = self.consoles.get(node.get("console_interface") or "")
        if console is None:
            raise UnsupportedDriverExtension(
                f"Driver {node['driver']} does not support console (disabled or not "
                "implemented).")
        return console

    def vendor_for(self, node: Mapping[str, Any]) -> VendorInterface | None:
        """The node's vendor interface; None for no-vendor (no methods, as Ironic's)."""
        return self.vendors.get(node.get("vendor_interface") or "")

    def interface_names(self) -> dict[str, str]:
        """What the node documents show; the inspect name follows the loaded interface."""
        names = dict(self.hw.interface_names)
        if self.inspect is not None:
            names["inspect"] = self.inspect.name
        return names

    def accepted(self, iface: str) -> tuple[str, ...]:
        """The implementation names a node of this type may set for `iface`, default first."""
        default = self.interface_names().get(iface)
        extra = tuple(v for v in self.hw.also_accepted.get(iface, ()) if v != default)
        return ((default,) if default else ()) + extra

    def interfaces(self) -> dict[str, BaseInterface]:
        found: dict[str, BaseInterface] = {"power": self.power, "management": self.management}
        if self.inspect is not None:
            found["inspect"] = self.inspect
        return found

    def properties(self) -> dict[str, str]:
        merged: dict[str, str] = {}
        for iface in self.interfaces().values():
            merged.update(iface.properties)
        return merged

    def secret_properties(self) -> frozenset[str]:
        secrets: set[str] = set()
        for iface in self.interfaces().values():
            secrets |= iface.secret_properties
        return frozenset(secrets)


# --- helpers for driver_info parsing, shared by all drivers ---------------------------------


def require(info: Mapping[str, Any], key: str) -> Any:
    value = info.get(key)
    if value is None or value == "":
        raise MissingParameterValue(f"driver_info is missing the required field '{key}'")
    return value


def as_port(info: Mapping[str, Any], key: str, default: int) -> int:
    return fields.port_number("driver_info", key, info.get(key, default))


def as_secret(info: Mapping[str, Any], key: str) -> str | None:
    """A string field that may hold a secret: None when absent or empty; a wrong type is
    refused without showing the value."""
    value = info.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidParameterValue(f"driver_info field '{key}' must be a string")
    return value


def as_str(info: Mapping[str, Any], key: str, default: str | None = None) -> str | None:
    raw = info.get(key, default)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidParameterValue(f"driver_info field '{key}' must be a string, got {raw!r}")
    return raw
