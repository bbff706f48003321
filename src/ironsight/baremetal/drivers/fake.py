"""Fake interfaces: instant and in memory, for tests and demos without any hardware; what
each answers is what Ironic's fake interfaces answer (drivers/modules/fake.py).

State lives in the interface instance (one per conductor), keyed by node UUID, so it survives
between calls but not a conductor restart; a node first seen takes its recorded power state.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import (
    BOOT_DEVICE_PXE,
    ConsoleInterface,
    InspectInterface,
    InspectOutcome,
    ManagementInterface,
    NodeContext,
    PowerInterface,
    VendorInterface,
    VendorMethod,
    check_boot_device,
)
from ironsight.common.config import Config
from ironsight.common.exceptions import InvalidParameterValue, MissingParameterValue

LOG = logging.getLogger(__name__)

_POWER_TARGETS = (states.POWER_ON, states.POWER_OFF, states.REBOOT)


def _power_delay(node: NodeContext) -> float:
    raw = node.driver_info.get("fake_power_delay", 0)
    try:
        delay = float(raw)
    except (TypeError, ValueError):
        delay = -1.0
    if not 0 <= delay <= 3600:
        raise InvalidParameterValue(f"driver_info field 'fake_power_delay' must be a number of "
                                    f"seconds from 0 to 3600, got {raw!r}")
    return delay


class FakePower(PowerInterface):
    syncable = False  # the stored power state is the truth; nothing to read
    properties = {"fake_power_delay": "Optional. Seconds each power action takes (default 0): "
                                      "for trying timeouts and fail-over without hardware."}

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.power_states: dict[str, str] = {}

    def validate(self, node: NodeContext) -> None:
        """The fake driver needs no driver_info; `fake_power_delay` must be sane if given."""
        _power_delay(node)

    async def get_power_state(self, node: NodeContext) -> str:
        return self.power_states.setdefault(node.uuid, node.power_state or states.POWER_OFF)

    async def set_power_state(self, node: NodeContext, target: str, timeout: float) -> None:
        if target not in _POWER_TARGETS:
            raise InvalidParameterValue(
                f"unsupported target power state {target!r}; expected one of "
                f"{', '.join(_POWER_TARGETS)}")
        await asyncio.sleep(_power_delay(node))
        # a reboot ends with the node on
        self.power_states[node.uuid] = (
            states.POWER_OFF if target == states.POWER_OFF else states.POWER_ON)


# Ironic's fake management: a node boots from PXE, not persistently, until told otherwise.
_FAKE_BOOT = {"boot_device": BOOT_DEVICE_PXE, "persistent": False}
# Ironic's fake indicators: component -> indicator -> what it can be. Every one reads "on";
# none can be set (Ironic's fake has no set_indicator_state).
FAKE_INDICATORS: dict[str, dict[str, dict[str, Any]]] = {
    "chassis": {"led-0": {"readonly": True, "states": ["off", "on"]}},
    "system": {"led": {"readonly": False, "states": ["blinking", "off", "on"]}},
}


class FakeManagement(ManagementInterface):
    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        # the boot devices set, by node UUID (what tests and discoverd's flows look at)
        self.boot_devices: dict[str, dict[str, Any]] = {}

    def validate(self, node: NodeContext) -> None:
        """Anything goes: the fake driver needs no driver_info."""

    async def set_boot_device(self, node: NodeContext, device: str,
                              persistent: bool = False) -> None:
        check_boot_device(device)
        self.boot_devices[node.uuid] = {"boot_device": device, "persistent": persistent}

    async def get_boot_device(self, node: NodeContext) -> dict[str, Any]:
        """What was set last; a node never set boots from PXE, as Ironic's fake says."""
        return dict(self.boot_devices.get(node.uuid, _FAKE_BOOT))

    async def set_boot_mode(self, node: NodeContext, mode: str) -> None:
        """Taken and forgotten, as Ironic's fake management does."""

    async def set_secure_boot_state(self, node: NodeContext, enabled: bool) -> None:
        """Taken and forgotten, as Ironic's fake management does."""

    async def supported_indicators(self, node: NodeContext) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(FAKE_INDICATORS)

    async def get_indicator_state(self, node: NodeContext, component: str,
                                  indicator: str) -> str:
        if component not in FAKE_INDICATORS:
            raise InvalidParameterValue(f"Invalid component {component} specified.")
        if indicator not in FAKE_INDICATORS[component]:
            raise InvalidParameterValue(f"Invalid indicator {indicator} specified.")
        return "on"


class FakeConsole(ConsoleInterface):
    """Starts and stops nothing; a running console is reached by nothing (`{}`), as
    Ironic's fake console."""

    name = "fake"

    def validate(self, node: NodeContext) -> None:
        """Anything goes: the fake console needs no driver_info."""

    async def start_console(self, node: NodeContext) -> None:
        return None

    async def stop_console(self, node: NodeContext) -> None:
        return None

    async def get_console(self, node: NodeContext) -> dict[str, Any]:
        return {}


async def _compare(expected: str, args: Mapping[str, Any]) -> bool:
    return bool(args.get("bar") == expected)


async def _log(node: NodeContext, args: Mapping[str, Any]) -> None:
    LOG.debug("Node %s: log_passthrough called with %s", node, dict(args))


class FakeVendor(VendorInterface):
    """Ironic's fake vendor interface (its `FakeVendorB`): methods that compare their `bar`
    argument with a word, and one that takes anything and only logs it."""

    name = "fake"

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)

        def comparing(word: str) -> Callable[[NodeContext, Mapping[str, Any]],
                                             Awaitable[bool]]:
            return lambda _node, args: _compare(word, args)

        found = [
            VendorMethod("fourth_method_shared_lock", comparing("woof"),
                         description="Test if the value of bar is woof",
                         require_exclusive_lock=False),
            VendorMethod("log_passthrough", _log, description="Test pass-through to wait."),
            VendorMethod("second_method", comparing("kazoo"),
                         description="Test if the value of bar is kazoo"),
            VendorMethod("third_method_sync", comparing("meow"), async_call=False,
                         description="Test if the value of bar is meow"),
        ]
        self._methods = {m.name: m for m in found}

    def methods(self) -> Mapping[str, VendorMethod]:
        return self._methods

    def validate(self, node: NodeContext, method: str | None = None,
                 args: Mapping[str, Any] | None = None) -> None:
        """`bar` is required (not empty) by the comparing methods, and is all they take."""
        if method is None or method == "log_passthrough":
            return
        given = dict(args or {})
        if not given.get("bar"):
            raise MissingParameterValue(f"Parameter 'bar' not passed to method '{method}'.")
        extra = sorted(set(given) - {"bar"})
        if extra:
            raise InvalidParameterValue(
                f"Method '{method}' takes only the parameter 'bar', not: {', '.join(extra)}")


class FakeInspect(InspectInterface):
    name = "fake"

    def validate(self, node: NodeContext) -> None:
        """Anything goes: the fake driver needs no driver_info."""

    async def start(self, node: NodeContext, *, again: bool = False) -> InspectOutcome:
        """Inspection 'succeeds' at once, finding nothing."""
        return InspectOutcome.done()
