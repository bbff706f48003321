"""`extra-hardware`: the report's extra-hardware `data`, as nested mappings in `extra`.

python-hardware (and our agent's optional extra section) reports `data` as a list of
`[category, item, property, value]` records; inspection rules want `extra[category][item]
[property]`, so this hook provides it (values that read as whole numbers become numbers) and
drops the raw `data` from the processed data, as upstream. A record that is not such a list
is skipped with a warning. With `[processing] extra_hardware_strict`, data with a record not
4 items long is refused as a whole (a warning) and dropped too.
"""

from __future__ import annotations

import logging
from typing import Any

from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import EXTRA_HARDWARE, ExtraHardware

LOG = logging.getLogger(__name__)
RECORD = 4


def _number(value: Any) -> Any:
    if isinstance(value, str | int) and not isinstance(value, bool):
        try:
            return int(value)
        except ValueError:
            pass
    return value


class ExtraHardwareHook(ProcessingHook):
    name = "extra-hardware"
    provides = (EXTRA_HARDWARE,)

    def before_update(self, ctx: ProcessingContext) -> None:
        if "data" not in ctx.data:
            LOG.warning("Node %s: no extra hardware data in the report", ctx.node.get("uuid"))
            return
        data = ctx.data["data"]
        strict = self.conf.processing.extra_hardware_strict
        if not (isinstance(data, list) and all(
                isinstance(item, list) and (not strict or len(item) == RECORD) for item in data)):
            ctx.warn("extra hardware data is not a list of [category, item, property, value] "
                     "records; not converted" + (" and dropped (strict)" if strict else ""))
            if strict:
                ctx.set(EXTRA_HARDWARE, ExtraHardware(None))
            return
        extra: dict[str, Any] = {}
        for record in data:
            if not record:
                continue
            if len(record) < RECORD or not all(isinstance(k, str) for k in record[:3]):
                ctx.warn(f"extra hardware record {record!r:.80} skipped: not "
                         "[category, item, property, value]")
                continue
            category, item, prop, value = record[:RECORD]
            extra.setdefault(category, {}).setdefault(item, {})[prop] = _number(value)
        ctx.set(EXTRA_HARDWARE, ExtraHardware(extra))


class ExtraHardwareInspector(ExtraHardwareHook):
    """ironic-inspector's name for it."""

    name = "extra_hardware"
