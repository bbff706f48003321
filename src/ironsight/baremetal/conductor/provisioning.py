"""The provision verbs beyond inspection (deploy, undeploy, rebuild, clean, rescue,
unrescue, service, adopt), on hardware types that `provisions` (fake-hardware).

Like Ironic's fake interfaces they do nothing: each verb passes through its transient state
and ends at once where Ironic's fake-hardware ends, with the same side effects on the node
(power, instance fields). Other types refuse them with a 400 naming the type.
"""

from __future__ import annotations

from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.conductor.task import NodeTask
from ironsight.baremetal.db import allocations as dballoc
from ironsight.baremetal.drivers.base import Driver
from ironsight.common.exceptions import IronsightError, UnsupportedDriverExtension

# The event that ends each verb's transient state, in order (undeploy cleans after it).
_ENDINGS: dict[str, tuple[str, ...]] = {
    "deploy": ("done",), "rebuild": ("done",), "undeploy": ("done", "provided"),
    "clean": ("done",), "rescue": ("done",), "unrescue": ("done",),
    "service": ("done",), "adopt": ("done",),
}
# The power state each verb leaves the node in (None: unchanged).
_POWER: dict[str, str | None] = {
    "deploy": states.POWER_ON, "rebuild": states.POWER_ON, "undeploy": states.POWER_OFF,
    "clean": states.POWER_OFF, "rescue": states.POWER_ON, "unrescue": states.POWER_ON,
    "service": states.POWER_ON, "adopt": None,
}


class NodeProtected(IronsightError):
    code = 403


def check_supported(driver: Driver, node: dict[str, Any], event: str) -> None:
    """400 unless the node's hardware type can run `event` (and its rescue interface, for
    a rescue)."""
    if not driver.hw.provisions:
        raise UnsupportedDriverExtension(
            f'The requested action "{event}" is not supported by this hardware type '
            f'({node["driver"]}): ironsight deploys, cleans, rescues and services only '
            f'with fake-hardware.')
    if event in ("rescue", "unrescue") and node.get("rescue_interface") == "no-rescue":
        raise UnsupportedDriverExtension(
            f"Driver {node['driver']} does not support rescue (disabled or not "
            f"implemented).")
    if event in ("undeploy", "rebuild") and node.get("protected"):
        raise NodeProtected(f"Node {node['uuid']} is protected and cannot be undeployed, "
                            f"rebuilt or deleted")


async def run(task: NodeTask, driver: Driver, event: str, timeout: float) -> None:
    """Apply `event` and its endings, under the task's lock, releasing it at the end."""
    target = _final(task.node["provision_state"], event)
    await task.transition(event, target=target)
    power = _POWER[event]
    if power is not None:
        await driver.power.set_power_state(task.context, power, timeout)
    endings = _ENDINGS[event]
    for i, ending in enumerate(endings):
        last = i == len(endings) - 1
        values: dict[str, Any] = {}
        if last and power is not None:
            values.update(power_state=power, target_power_state=None)
        if event == "undeploy" and last:
            await _drop_allocation(task)
            values.update(instance_info={}, instance_uuid=None, instance_name=None,
                          allocation_id=None)
        await task.transition(ending, target=None if last else target, release=last,
                              **values)


async def _drop_allocation(task: NodeTask) -> None:
    """As Ironic, an undeployed node's allocation is deleted (the node's own fields are
    cleared by the caller's write)."""
    allocation_id = task.node.get("allocation_id")
    if allocation_id:
        async with task.db.begin() as conn:
            await task.fence(conn)
            await dballoc.delete_by_id(conn, int(allocation_id))


def _final(state: str, event: str) -> str | None:
    current = states.next_state(state, event)
    for ending in _ENDINGS[event]:
        current = states.next_state(current or "", ending)
    return current
