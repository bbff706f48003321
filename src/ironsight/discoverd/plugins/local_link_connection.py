"""`local-link-connection`: a port's `local_link_connection` from its NIC's LLDP.

For each NIC that validate_interfaces kept (so it requires `interfaces`), from the NIC's
reported TLVs (`lldp_raw`, else `interfaces[].lldp`, read on their own as upstream does, so
`parse-lldp` is not needed): `port_id` (the port ID, any subtype), `switch_id` (the chassis
ID, only when it is a MAC address) and `switch_info` (the system name). Keys the port already
has are never overwritten. A port created in the same run (by `ports`, before or after this
hook) is created with them. A NIC whose LLDP data cannot be decoded is skipped with a warning,
as upstream skips it.
"""

from __future__ import annotations

import logging
from typing import Any

from ironsight.discoverd import lldp
from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import INTERFACES
from ironsight.discoverd.plugins.parse_lldp import lldp_interfaces

LOG = logging.getLogger(__name__)


def link_of(reported: Any) -> tuple[dict[str, str], list[str]]:
    """The local link connection the TLVs describe; and problems (any: none is usable)."""
    tlvs, problems = lldp.decode(reported)
    if problems:
        return {}, problems
    found: dict[str, str] = {}
    for kind, value in tlvs:
        if kind not in (lldp.CHASSIS_ID, lldp.PORT_ID, lldp.SYSTEM_NAME):
            continue
        if len(value) > lldp.MAX_VALUE_OCTETS:
            problems.append(f"LLDP TLV type {kind}: {len(value)} octets, more than "
                            f"{lldp.MAX_VALUE_OCTETS}; dropped")
            continue
        try:
            if kind == lldp.PORT_ID:
                port = lldp.port_id(value)
                if port.value is not None:
                    found.setdefault("port_id", port.value)
            elif kind == lldp.CHASSIS_ID:
                chassis = lldp.chassis_id(value)
                if chassis.subtype == lldp.CHASSIS_MAC and chassis.value is not None:
                    found.setdefault("switch_id", chassis.value)
            elif kind == lldp.SYSTEM_NAME:
                try:
                    found.setdefault("switch_info", value.decode("utf-8"))
                except UnicodeDecodeError:
                    problems.append("LLDP system name is not UTF-8 text; skipped")
        except lldp.TlvError as exc:
            # a port or chassis ID that cannot be read: the link is unknown (upstream)
            return {}, [f"LLDP TLV type {kind}: {exc}"]
    return found, problems


class LocalLinkConnection(ProcessingHook):
    name = "local-link-connection"
    requires = (INTERFACES,)

    def before_update(self, ctx: ProcessingContext) -> None:
        nics = ctx.get(INTERFACES).all
        ports = {str(p.get("address", "")).lower(): p for p in ctx.ports}
        for name, iface in lldp_interfaces(ctx):
            if name not in nics:
                continue
            reported = lldp.reported_tlvs(ctx.data, iface)
            if reported is None:
                LOG.debug("Node %s: no LLDP data for interface %s", ctx.node.get("uuid"), name)
                continue
            found, problems = link_of(reported)
            for problem in problems:
                ctx.warn(f"interface {name}: {problem}")
            if found:
                self._record(ctx, nics[name].mac, ports.get(nics[name].mac), found)

    @staticmethod
    def _record(ctx: ProcessingContext, mac: str, port: dict[str, Any] | None,
                found: dict[str, str]) -> None:
        if port is None:  # for the port `ports` may create
            link = ctx.changes.port_fields.setdefault(mac, {}).setdefault(
                "local_link_connection", {})
            for key, value in found.items():
                link.setdefault(key, value)
            return
        existing = port.get("local_link_connection")
        if not isinstance(existing, dict):
            ctx.changes.patch_port(str(port["uuid"]), {
                "op": "add", "path": "/local_link_connection", "value": found})
            return
        ctx.changes.patch_port(str(port["uuid"]), *(
            {"op": "add", "path": f"/local_link_connection/{key}", "value": value}
            for key, value in found.items() if key not in existing))


class LocalLinkConnectionInspector(LocalLinkConnection):
    """ironic-inspector's name for it."""

    name = "local_link_connection"
