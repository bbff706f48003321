"""`ports`: create ports for the chosen NICs, delete per `keep_ports`, fix `pxe_enabled`."""

from __future__ import annotations

from ironsight.discoverd.plugins.base import ProcessingContext, ProcessingHook
from ironsight.discoverd.plugins.facts import INTERFACES


class Ports(ProcessingHook):
    name = "ports"
    requires = (INTERFACES,)

    def before_update(self, ctx: ProcessingContext) -> None:
        proc = self.conf.processing
        interfaces = ctx.get(INTERFACES)
        boot_mac = interfaces.boot_mac
        existing = {str(p["address"]).lower(): p for p in ctx.ports}
        chosen = {i.mac for i in interfaces.chosen.values()}
        seen = {i.mac for i in interfaces.all.values()}
        for mac in sorted(chosen - set(existing)):
            ctx.changes.create_ports[mac] = (mac == boot_mac) if boot_mac else True
        keep = {"all": None, "present": seen, "added": chosen}[proc.keep_ports]
        if keep is not None:
            ctx.changes.delete_ports = [p["uuid"] for mac, p in existing.items()
                                        if mac not in keep]
        if proc.update_pxe_enabled and boot_mac:
            doomed = set(ctx.changes.delete_ports)
            for mac, port in existing.items():
                want = mac == boot_mac
                if mac in seen and port["uuid"] not in doomed \
                        and bool(port.get("pxe_enabled")) != want:
                    ctx.changes.patch_port(
                        port["uuid"], {"op": "replace", "path": "/pxe_enabled", "value": want})
