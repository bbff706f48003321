"""Fake interfaces: instant and in memory, for tests and demos without any hardware.

State lives in the interface instance (one per conductor), keyed by node UUID, so it survives
between calls but not a conductor restart; a node first seen takes its recorded power state.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import (
    InspectInterface,
    InspectOutcome,
    ManagementInterface,
    NodeContext,
    PowerInterface,
    check_boot_device,
)
from ironsight.common.config import Config
from ironsight.common.exceptions import InvalidParameterValue

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


class FakeManagement(ManagementInterface):
    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.boot_devices: dict[str, dict[str, Any]] = {}

    def validate(self, node: NodeContext) -> None:
        """Anything goes: the fake driver needs no driver_info."""

    async def set_boot_device(self, node: NodeContext, device: str,
                              persistent: bool = False) -> None:
        check_boot_device(device)
        self.boot_devices[node.uuid] = {"boot_device": device, "persistent": persistent}

    async def get_boot_device(self, node: NodeContext) -> dict[str, Any]:
        return dict(self.boot_devices.get(node.uuid, {"boot_device": None, "persistent": None}))


class FakeInspect(InspectInterface):
    name = "fake"

    def validate(self, node: NodeContext) -> None:
        """Anything goes: the fake driver needs no driver_info."""

    async def start(self, node: NodeContext, *, again: bool = False) -> InspectOutcome:
        """Inspection 'succeeds' at once, finding nothing."""
        return InspectOutcome.done()
