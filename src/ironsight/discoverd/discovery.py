"""Auto-discovery: a report whose machine is under no introspection.

With `[auto_discovery] enabled` (or inspector's `node_not_found_hook = enroll`), such a
report is looked up over every node, not only those being inspected:
- by its identity MACs (identity.py: shared and virtual NICs excluded) among every node's
  ports and the claims of machines discovery is creating,
- by its BMC addresses among every node's driver_info,
- by its system serial with its system UUID among the machines whose reports were processed.

One node matched cleanly: the machine is known; it is "seen again": its report is stored as
a new inventory version and its node's history says so (nothing else changes, whatever its
state). No node: a new one is created in `enroll` (conductor/discovery.py checks again in
the transaction that creates it), quarantined unless its delivery manifest row approves
it, and the report is processed on it as an inspection's would be (hooks, rules with
`auto_discovered` in the plugin data, ports, stored data) with no power action. Anything
else (signals naming different nodes, a known serial with MACs of its own, a BMC of another
node, a BMC whose own serial is another machine's) creates nothing and is stored as a
conflict (conflicts.py) for an operator to resolve; the ramdisk gets Ironic's 404.

Creation is bounded: `[auto_discovery] rate_limit` nodes a minute per source subnet and
`max_pending` nodes waiting for approval; beyond them the answer is 429.

A node created and a new conflict are webhook events (`discovery.node_created`,
`discovery.conflict`; webhooks.py), when the service gave Discovery its `webhooks`.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ironsight.common import bmc
from ironsight.common.clock import utcnow
from ironsight.common.config import Config
from ironsight.common.exceptions import Conflict, Invalid, IronsightError, NotFound
from ironsight.common.ids import new_uuid
from ironsight.discoverd import bmc_probe, diagnosis, formats
from ironsight.discoverd import manifest as manifests
from ironsight.discoverd.conflicts import Conflicts, Signal
from ironsight.discoverd.deadlines import model_of
from ironsight.discoverd.discovery_store import DiscoveryStore, Key
from ironsight.discoverd.identity import Identity, identity_of
from ironsight.discoverd.ironic import BareMetal, IronicError
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.webhooks import Event, Webhooks

LOG = logging.getLogger(__name__)

CREATED, SEEN_AGAIN, CONFLICT = "created", "seen_again", "conflict"
LIMITED_SUBNET, LIMITED_PENDING = "rate_limited", "pending_limit"
OUTCOMES = (CREATED, SEEN_AGAIN, CONFLICT, LIMITED_SUBNET, LIMITED_PENDING)
# Seconds a claim of a node not created yet is another report's creation under way (the BMC
# check included); older, and still no node, it was left by a process that died half-way.
CLAIM_GRACE = 300.0


class DiscoveryLimited(IronsightError):
    """429: discovery may create no more nodes now."""

    code = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.headers = {"Retry-After": str(retry_after)}


@dataclass(frozen=True)
class Found:
    """What discovery did with a report: `uuid` of the node created or seen again."""

    outcome: str
    uuid: str


def subnet_of(address: str | None, conf: Config) -> str | None:
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return None
    prefix = (conf.auto_discovery.rate_limit_prefix_v4 if ip.version == 4
              else conf.auto_discovery.rate_limit_prefix_v6)
    return str(ipaddress.ip_network(f"{ip}/{min(prefix, ip.max_prefixlen)}", strict=False))


class Discovery:
    def __init__(self, conf: Config, cache: NodeCache, ironic: BareMetal,
                 store: DiscoveryStore | None = None,
                 conflicts: Conflicts | None = None,
                 refusals: Counter[str] | None = None) -> None:
        self.conf = conf
        self.cache = cache
        self.ironic = ironic
        self.store = store or DiscoveryStore(cache.db)
        self.conflicts = conflicts or Conflicts(cache.db)
        self.counts: Counter[str] = Counter()  # by outcome, since this replica started
        # the refused callbacks' counts by reason (rejections.py): a conflict is one too
        self.refusals: Counter[str] = refusals if refusals is not None else Counter()
        # the webhook outbox (set by the service: the Processor builds Discovery without it)
        self.webhooks: Webhooks | None = None

    @property
    def enabled(self) -> bool:
        return self.conf.discovery

    async def identity(self, inventory: dict[str, Any]) -> Identity:
        section = self.conf.auto_discovery
        shared = {*await self.store.non_unique(), *(m.lower() for m in section.non_unique_macs)}
        return identity_of(inventory, non_unique=shared,
                           non_unique_drivers=section.non_unique_drivers)

    async def handle(self, inventory: dict[str, Any], raw: Any, stored: Any | None,
                     source: str | None) -> Found:
        """Decide what the report of an unknown machine is (see the module's docstring).
        `raw`: the report (kept with a conflict); `stored`: what to store as its data
        (None: [processing] store_data is off). A created node's introspection is left in
        `processing` with the report accepted: the caller runs the processing."""
        identity = await self.identity(inventory)
        if not identity.macs and not identity.bmc_hosts and identity.system_key is None:
            raise NotFound("Could not find a node, and the report names no machine to "
                           "discover: no MAC that identifies one (all are shared or virtual), "
                           "no BMC address, no system serial with a system UUID")
        identity, signals = await self._signals(identity)
        nodes = {s.node for s in signals}
        if len(nodes) == 1 and self._clean(identity, signals):
            node = nodes.pop()
            await self._seen_again(node, identity, stored, source, inventory)
            return Found(SEEN_AGAIN, node)
        if signals:
            raise await self._conflict(identity, signals, source, raw,
                                       "it matches known nodes ambiguously")
        return await self._create(identity, inventory, stored, source, raw)

    # --- lookup ---------------------------------------------------------------------------

    async def _signals(self, identity: Identity) -> tuple[Identity, list[Signal]]:
        """The known nodes the report names, and why; a MAC that also names a node whose
        machine has another system key is shared (two machines have it): recorded, and no
        signal any more."""
        matches = await self.ironic.discovery_lookup(identity.macs, identity.bmc_hosts)
        signals = [Signal(m["signal"], m["value"], m["node"]) for m in matches]
        keys: list[Key] = [("mac", m) for m in identity.macs]
        if identity.system_key is not None:
            keys.append(("system", identity.system_key))
        known = {s.node for s in signals}
        gone: set[str] = set()
        for (kind, value), node in (await self.store.owners(keys)).items():
            if node not in known and node not in gone and not await self._exists(node):
                if not await self.store.settled(node, CLAIM_GRACE):
                    raise Conflict("This machine is being discovered by another of its "
                                   "reports; retry")
                gone.add(node)  # deleted by an operator: the machine is unknown again
                await self.store.forget(node)
            if node not in gone:
                signals.append(Signal("serial" if kind == "system" else kind, value, node))
        if identity.system_key is not None:
            systems = await self.store.system_keys_of(s.node for s in signals
                                                      if s.kind == "mac")
            for signal in [s for s in signals if s.kind == "mac"]:
                other = systems.get(signal.node)
                if other is not None and other != identity.system_key:
                    why = (f"seen on two machines (node {signal.node} and serial "
                           f"{identity.serial})")
                    LOG.warning("MAC %s is %s: it identifies no machine from now on",
                                signal.value, why)
                    await self.store.mark_non_unique(signal.value, why)
                    identity = identity.without(signal.value, why)
                    signals = [s for s in signals if s.value != signal.value]
        unique: dict[tuple[str, str, str], Signal] = {}
        for s in signals:
            unique.setdefault((s.kind, s.value, s.node), s)
        return identity, list(unique.values())

    async def _exists(self, node: str) -> bool:
        try:
            await self.ironic.get_node(node, fields="uuid")
        except IronicError as exc:
            if exc.code == 404:
                return False
            raise
        return True

    @staticmethod
    def _clean(identity: Identity, signals: list[Signal]) -> bool:
        """One node, named by an identity MAC or by the system key, and not contradicted:
        a BMC alone may be misreported or spoofed, and a known serial whose report's MACs
        match none of its node's is a board swap or a clone (a conflict, both)."""
        kinds = {s.kind for s in signals}
        if "mac" in kinds:
            return True
        return "serial" in kinds and not identity.macs

    # --- seen again -----------------------------------------------------------------------

    async def _seen_again(self, uuid: str, identity: Identity, stored: Any | None,
                          source: str | None, inventory: dict[str, Any]) -> None:
        """A new inventory version and a history event; nothing else of the node changes."""
        kept = False
        if stored is not None:
            try:
                await self.cache.start(uuid, manage_boot=False, macs=(), bmc_addresses=())
            except Conflict:
                LOG.info("Node %s: seen again while an introspection of it runs; its report "
                         "is not stored twice", uuid)
            else:
                step = (diagnosis.REPORT_RECEIVED, {"macs": list(identity.all_macs),
                                                    "model": model_of(inventory),
                                                    "seen_again": True}, None)
                if await self.cache.accept_report(uuid, stored, self.cache.owner, step):
                    await self.cache.store_data(uuid, {"inventory": inventory,
                                                       "seen_again": True}, processed=True)
                    await self.cache.transition(uuid, "finish")
                    kept = True
        if identity.system_key is not None:
            await self.store.set_system_key(uuid, identity.system_key)
        await self.store.seen_again(uuid)
        what = "stored as a new inventory version" if kept else "not stored"
        await self.ironic.apply_changes(uuid, [], event=(
            f"Seen again: the machine booted the discovery ramdisk from {source or '?'} "
            f"(MACs {', '.join(identity.macs) or 'none that identify it'}); its report was "
            f"{what}"))
        self.counts[SEEN_AGAIN] += 1
        LOG.info("Node %s seen again from %s", uuid, source)

    # --- conflicts ------------------------------------------------------------------------

    async def _conflict(self, identity: Identity, signals: list[Signal], source: str | None,
                        raw: Any, why: str) -> NotFound:
        named = "; ".join(f"{s.kind} {s.value} of node {s.node}" if s.node else
                          f"{s.kind} {s.value}" for s in signals)
        message = f"Discovery refused: {why} ({named})"
        conflict_id, new = await self.conflicts.record(identity, signals, source=source,
                                                       message=message, data=raw)
        self.counts[CONFLICT] += 1
        self.refusals[diagnosis.DISCOVERY_CONFLICT] += 1
        if new:
            LOG.warning("Discovery conflict %d: %s", conflict_id, message)
            await self._emit(Event("discovery.conflict", None, {
                "conflict_id": conflict_id, "matched": sorted({s.node for s in signals
                                                               if s.node}),
                "signals": [s.to_dict() for s in signals], "source_address": source,
                "serial": identity.serial, "system_uuid": identity.system_uuid}))
        return NotFound(f"Could not find a node for this machine: {message}; stored as "
                        f"discovery conflict {conflict_id} (ironsight discovery conflicts)")

    # --- resolving conflicts --------------------------------------------------------------

    async def resolve(self, conflict_id: int, resolution: str, node: str | None,
                      user: str | None) -> Found | None:
        """Resolve a conflict (conflicts.py): `same_machine` moves the machine's MACs to
        `node` (one of the matched nodes; the only one may go unnamed), `new_machine`
        creates its node from the stored report (a Found the caller processes), `ignore`
        only records it. Recorded first, so that a second resolution is refused."""
        view, raw = await self.conflicts.get(conflict_id)
        if resolution == "same_machine":
            target = self._target(view, node)
        elif node is not None:
            raise Invalid("Field 'node' is only for the resolution same_machine")
        if resolution != "ignore" and not isinstance(raw, dict):
            raise Invalid(f"Discovery conflict {conflict_id} kept no report: only 'ignore' "
                          "resolves it")
        await self.conflicts.resolve(conflict_id, resolution, user)
        if resolution == "ignore":
            return None
        assert isinstance(raw, dict)
        inventory = formats.normalize({k: v for k, v in raw.items() if k != "logs"}
                                      ).get("inventory") or {}
        identity = await self.identity(inventory)
        if resolution == "same_machine":
            await self._move_to(target, identity, inventory, conflict_id, user)
            return Found(SEEN_AGAIN, target)
        for signal in view["signals"]:
            if signal["signal"] == "mac":
                await self.store.mark_non_unique(
                    signal["value"], f"discovery conflict {conflict_id} resolved as a new "
                    f"machine (the MAC of node {signal['node']} too)")
                identity = identity.without(signal["value"], "shared with another node")
        stored = raw if self.conf.processing.store_data else None
        uuid = new_uuid()
        if identity.system_key is not None:  # the machine is this new node from now on
            await self.store.move_claims([("system", identity.system_key)], uuid)
        try:
            created = await self._create_node(uuid, identity, None, None,
                                              view["source_address"], raw, check=False,
                                              why=f"discovery conflict {conflict_id} resolved "
                                                  f"as a new machine by {user or '?'}")
        except BaseException:
            await self.store.forget(uuid)
            raise
        await self.store.record(created, source=view["source_address"], subnet=None,
                                serial=identity.serial, system_uuid=identity.system_uuid,
                                manifest_serial=None, bmc_probe=None)
        await self._accept(created, identity, inventory, stored)
        await self._created_event(created, identity, view["source_address"], "pending")
        return Found(CREATED, created)

    @staticmethod
    def _target(view: dict[str, Any], node: str | None) -> str:
        matched = [m for m in view["matched"] if m]
        if node is None:
            if len(matched) != 1:
                raise Invalid("Field 'node' is required: name the matched node the machine is "
                              f"(one of {', '.join(matched) or 'none'})")
            return str(matched[0])
        if node not in matched:
            raise Invalid(f"Invalid value for node: {node!r} is not a node this conflict "
                          f"matched ({', '.join(matched) or 'none'})")
        return node

    async def _move_to(self, target: str, identity: Identity, inventory: dict[str, Any],
                       conflict_id: int, user: str | None) -> None:
        """The machine is `target` with a new board: its ports become the report's MACs
        (moved from another node, or created), the ports of MACs it no longer has go."""
        pxe = str((inventory.get("boot") or {}).get("pxe_interface") or "").lower()
        current = {str(p["address"]).lower(): p for p in await self.ironic.list_ports(target)}
        matches = {m["value"]: m["node"] for m in await self.ironic.discovery_lookup(
            identity.macs, ()) if m["signal"] == "mac"}
        moved, created, deleted = [], [], []
        for mac in identity.macs:
            if mac in current:
                continue
            if mac in matches:
                port = next(p for p in await self.ironic.list_ports(matches[mac])
                            if str(p["address"]).lower() == mac)
                await self.ironic.patch_port(port["uuid"], [
                    {"op": "replace", "path": "/node_uuid", "value": target}])
                moved.append(mac)
            else:
                await self.ironic.create_port(target, mac, mac == pxe or not pxe, None)
                created.append(mac)
        for mac, port in current.items():
            if mac not in identity.all_macs:
                await self.ironic.delete_port(port["uuid"])
                deleted.append(mac)
        keys: list[Key] = [("mac", m) for m in identity.macs]
        if identity.system_key is not None:
            keys.append(("system", identity.system_key))
        await self.store.move_claims(keys, target)
        await self.ironic.apply_changes(target, [], event=(
            f"Discovery conflict {conflict_id} resolved by {user or '?'} as the same machine "
            f"with a replaced board: ports moved here {moved or 'none'}, created "
            f"{created or 'none'}, deleted {deleted or 'none'}"))

    # --- creation -------------------------------------------------------------------------

    async def _reserve(self, uuid: str, subnet: str | None) -> None:
        if subnet is None:
            return
        section = self.conf.auto_discovery
        since = utcnow() - dt.timedelta(seconds=60)
        if not await self.store.reserve(uuid, subnet, section.rate_limit, since):
            self.counts[LIMITED_SUBNET] += 1
            raise DiscoveryLimited(f"Discovery created {section.rate_limit} nodes for "
                                   f"{subnet} in the last minute ([auto_discovery] "
                                   "rate_limit); retry later", retry_after=60)

    async def _create(self, identity: Identity, inventory: dict[str, Any],
                      stored: Any | None, source: str | None, raw: Any) -> Found:
        subnet = subnet_of(source, self.conf)
        uuid = new_uuid()
        keys: list[Key] = [("mac", m) for m in identity.macs]
        if identity.system_key is not None:
            keys.append(("system", identity.system_key))
        if not await self.store.claim(uuid, keys):
            raise Conflict("Another report of this machine is being processed; retry")
        try:
            await self._reserve(uuid, subnet)
            entry = await self.store.manifest_entry(identity.serial, identity.macs)
            password = _password(entry)
            probe = await self._probe(identity, entry, password)
            if probe is not None and probe.get("serial_match") is False:
                signal = Signal("bmc_probe", probe["address"], "")
                raise await self._conflict(
                    identity, [signal], source, raw,
                    f"the BMC at {probe['address']} says it is another machine (serial "
                    f"{probe.get('bmc_serial')}, system UUID {probe.get('bmc_system_uuid')})")
            uuid = await self._create_node(uuid, identity, entry, probe, source, raw,
                                           password=password)
        except BaseException:
            await self.store.forget(uuid)  # its claims and its place in the rate
            raise
        await self.store.record(uuid, source=source, subnet=subnet, serial=identity.serial,
                                system_uuid=identity.system_uuid,
                                manifest_serial=entry.serial if entry else None,
                                bmc_probe=probe)
        if entry is not None:
            await self.store.arrived(entry.serial, uuid)
        await self._accept(uuid, identity, inventory, stored)
        self.counts[CREATED] += 1
        await self._created_event(uuid, identity, source,
                                  "approved" if entry is not None else "pending")
        LOG.info("Node %s created by discovery from %s (serial %s)%s", uuid, source,
                 identity.serial, f", manifest row {entry.serial}" if entry else "")
        return Found(CREATED, uuid)

    async def _created_event(self, uuid: str, identity: Identity, source: str | None,
                             status: str) -> None:
        await self._emit(Event("discovery.node_created", uuid, {
            "node": uuid, "serial": identity.serial, "system_uuid": identity.system_uuid,
            "source_address": source, "status": status}))

    async def _emit(self, event: Event) -> None:
        """Queue a webhook event; never fails discovery (the node or conflict is stored
        already: a lost event is logged)."""
        if self.webhooks is None:
            return
        try:
            await self.webhooks.enqueue(None, [event])
        except Exception as exc:
            LOG.warning("Webhook event %s (node %s) was not queued: %s", event.type,
                        event.node, exc)

    async def _accept(self, uuid: str, identity: Identity, inventory: dict[str, Any],
                      stored: Any | None) -> None:
        """The new node's introspection, `processing` its report (the caller runs it)."""
        await self.cache.start(uuid, manage_boot=False, macs=(), bmc_addresses=())
        if isinstance(stored, dict):  # the mark survives a restart's reprocessing
            stored = {**stored, "auto_discovered": True}
        step = (diagnosis.REPORT_RECEIVED, {"macs": list(identity.all_macs),
                                            "model": model_of(inventory),
                                            "discovered": True}, None)
        await self.cache.accept_report(uuid, stored, self.cache.owner, step)

    async def _probe(self, identity: Identity, entry: manifests.ManifestEntry | None,
                     password: str | None) -> dict[str, Any] | None:
        host = (entry.bmc_address if entry and entry.bmc_address else
                identity.bmc_hosts[0] if identity.bmc_hosts else None)
        if host is None or not self.conf.auto_discovery.probe_bmc:
            return None
        redfish = entry is not None and entry.driver in bmc.REDFISH_DRIVERS
        port = entry.bmc_port if entry is not None else None
        result = await bmc_probe.probe(
            host, ipmi_port=port if port and not redfish else 623,
            redfish_port=port if redfish else None,
            username=entry.bmc_username if entry else None, password=password,
            expected_serial=identity.serial, expected_uuid=identity.system_uuid,
            timeout=self.conf.auto_discovery.probe_timeout)
        return result.to_dict()

    def _driver_info(self, identity: Identity, entry: manifests.ManifestEntry | None,
                     driver: str, password: str | None) -> dict[str, Any]:
        if entry is not None and entry.bmc_address:
            return manifests.driver_info(entry, password)
        if not identity.bmc_hosts:
            return {}
        host = identity.bmc_hosts[0]
        if not self.conf.auto_discovery.enabled:  # inspector's enroll hook, as it was
            return {"ipmi_address": host}
        field = bmc.driver_field(driver)
        return {field: bmc.field_value(field, host)} if field else {}

    async def _create_node(self, uuid: str, identity: Identity,
                           entry: manifests.ManifestEntry | None,
                           probe: dict[str, Any] | None, source: str | None, raw: Any,
                           *, check: bool = True, why: str | None = None,
                           password: str | None = None) -> str:
        """Create the node; `check`: unless a known node matches (in the same transaction);
        without it (an operator said it is a new machine), whatever matches."""
        driver = (entry.driver if entry and entry.driver else
                  self.conf.auto_discovery.driver)
        mark = {"source_address": source, "discovered_at": utcnow().isoformat(),
                "serial": identity.serial, "system_uuid": identity.system_uuid,
                "manifest": entry.serial if entry else None, "bmc_probe": probe}
        node: dict[str, Any] = {"uuid": uuid, "driver": driver,
                                "driver_info": self._driver_info(identity, entry, driver,
                                                                 password),
                                "extra": {"discovery": mark}}
        if entry is not None:
            node.update({k: v for k, v in (("name", entry.name),
                                           ("resource_class", entry.resource_class)) if v})
        event = (f"Node auto-discovered from {source or '?'} (serial {identity.serial}, "
                 f"MACs {', '.join(identity.macs) or 'none that identify it'})")
        event += (f"; on the delivery manifest (row {entry.row}): approved" if entry
                  else "; quarantined until approved")
        if why is not None:
            event += f"; {why}"
        body = {"node": node, "traits": list(entry.traits) if entry else [],
                "macs": list(identity.macs) if check else [],
                "bmc_addresses": list(identity.bmc_hosts) if check else [],
                "status": "approved" if entry else "pending",
                "max_pending": self.conf.auto_discovery.max_pending, "event": event}
        try:
            answer = await self.ironic.create_discovered(body)
        except IronicError as exc:
            if exc.code == 429:
                self.counts[LIMITED_PENDING] += 1
                raise DiscoveryLimited(f"{exc} ([auto_discovery] max_pending)",
                                       retry_after=60) from None
            if exc.code == 409 and "name" in node:  # the manifest's name is taken
                LOG.warning("Node %s: name %r from the manifest is taken: %s", uuid,
                            node["name"], exc)
                node.pop("name")
                mark["name_refused"] = str(exc)
                answer = await self.ironic.create_discovered(body)
            else:
                raise
        if answer.get("node") is None:  # a node matched after all (created meanwhile)
            signals = [Signal(m["signal"], m["value"], m["node"])
                       for m in answer.get("matches") or []]
            raise await self._conflict(identity, signals, source, raw,
                                       "known nodes matched when it was created")
        return str(answer["node"]["uuid"])


def _password(entry: manifests.ManifestEntry | None) -> str | None:
    """The BMC password the manifest row names by file (read once per creation: the BMC
    check and the new node's driver_info use it); None when there is none or it is
    unreadable (said in the log, never the password)."""
    if entry is None or not entry.bmc_password_file:
        return None
    try:
        return manifests.read_password(entry)
    except manifests.ManifestError as exc:
        LOG.warning("Manifest row %s: %s", entry.serial, exc)
        return None
