"""`parse-lldp`: each interface's LLDP TLVs, decoded into `parsed_lldp` (Ironic's names).

Reads `lldp_raw[interface]`, else the inventory's `interfaces[].lldp`, for the first 64
interfaces of the inventory, and provides `parsed_lldp` ({interface: {name: value}}, stored in
the processed data for inspection rules, and in `all_interfaces[*].lldp_processed` as
ironic-inspector stored it). What cannot be decoded (a value that is not
hexadecimal, text that is not UTF-8, a value over 511 octets, a malformed TLV) is skipped
with a warning: a switch's or a ramdisk's odd data never fails an inspection.
"""

from __future__ import annotations

import logging
from typing import Any

from ironsight.discoverd import lldp
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import INTERFACES, PARSED_LLDP, ParsedLldp
from ironsight.discoverd.plugins.validate_interfaces import named_interfaces

LOG = logging.getLogger(__name__)


def lldp_interfaces(ctx: ProcessingContext) -> list[tuple[str, dict[str, Any]]]:
    """The inventory's interfaces by name, at most `lldp.MAX_INTERFACES` of them (an LLDPDU
    belongs to a physical port, which bounds how many a machine has; more is a broken or
    hostile report), with a warning when there are more."""
    interfaces = named_interfaces(ctx)
    if len(interfaces) > lldp.MAX_INTERFACES:
        ctx.warn(f"LLDP: the report has {len(interfaces)} interfaces; only the first "
                 f"{lldp.MAX_INTERFACES} are read")
    return interfaces[:lldp.MAX_INTERFACES]


class ParseLldp(ProcessingHook):
    name = "parse-lldp"
    provides = (PARSED_LLDP,)

    def before_update(self, ctx: ProcessingContext) -> None:
        parsed: dict[str, dict[str, Any]] = {}
        for name, iface in lldp_interfaces(ctx):
            reported = lldp.reported_tlvs(ctx.data, iface)
            if reported is None:
                LOG.debug("Node %s: no LLDP data for interface %s", ctx.node.get("uuid"), name)
                continue
            tlvs, problems = lldp.decode(reported)
            found = lldp.parse(tlvs)
            for problem in problems + found.problems:
                ctx.warn(f"interface {name}: {problem}")
            if found.values:
                parsed[name] = found.values
        ctx.set(PARSED_LLDP, ParsedLldp(parsed, self._with_inspector_place(ctx, parsed)))

    @staticmethod
    def _with_inspector_place(ctx: ProcessingContext, parsed: dict[str, dict[str, Any]]
                              ) -> dict[str, dict[str, Any]] | None:
        """`all_interfaces` with each NIC's `lldp_processed` (ironic-inspector's place),
        when validate_interfaces provided them (the hook does without: it does not require
        them)."""
        if not ctx.has(INTERFACES):
            return None
        return {name: {**nic.as_dict(), **({"lldp_processed": parsed[name]}
                                           if name in parsed else {})}
                for name, nic in ctx.get(INTERFACES).all.items()}


class LldpBasic(ParseLldp):
    """ironic-inspector's name for it (which stored the result in
    `all_interfaces[*].lldp_processed`; here it is `parsed_lldp`, as Ironic's)."""

    name = "lldp_basic"
