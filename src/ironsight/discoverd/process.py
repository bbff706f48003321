"""Processing a ramdisk's report (`POST /v1/continue`) and re-processing stored data.

Order, and why:
1. Validate the report and run the hooks' `before_processing` (no node is touched yet).
2. Look the node up among introspections only (MACs, BMC addresses); no match or a tie is an
   error that changes nothing.
3. Claim it (`waiting` → `processing`, a conditional UPDATE: a second callback loses).
4. Store the raw report and answer the ramdisk (200): everything it can be told about — a bad
   report, a reported error, no or several matching nodes — has been decided by then.
5. In the background: fetch the node and its ports, let the hooks decide, apply the changes
   in as few bare-metal requests as possible, store the processed data, power the node off,
   finish. The ramdisk is not held while discoverd waits on the bare-metal API (whose calls
   may retry on 409 for seconds), and a restart resumes from the stored report.
Every failure after step 2 ends the introspection with an error an operator can act on.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ironsight.common.clock import utcnow
from ironsight.common.config import Config
from ironsight.common.exceptions import DatabaseUnavailable, Invalid, IronsightError, NotFound
from ironsight.common.files import create_private, private_dir
from ironsight.common.workers import WorkerPool
from ironsight.discoverd import callback_token, components, diagnosis, formats, states
from ironsight.discoverd.component_events import ComponentEvents
from ironsight.discoverd.deadlines import model_of
from ironsight.discoverd.discovery import CREATED, Discovery
from ironsight.discoverd.introspect import Introspector
from ironsight.discoverd.ironic import BareMetal, IronicError
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.plugins.base import (
    Changes,
    Fact,
    ProcessingContext,
    ProcessingHook,
    ReportedError,
)
from ironsight.discoverd.rejections import Rejections
from ironsight.discoverd.rule_runner import RuleRunner, patched, summary, with_properties
from ironsight.discoverd.rules.model import Facts, Outcome, Rule
from ironsight.discoverd.timeline import Step
from ironsight.discoverd.webhooks import Event

LOG = logging.getLogger(__name__)

SEVERITY_ORDER = ("critical", "warning", "info")
HISTORY_SEVERITY = {"critical": "ERROR", "warning": "WARNING", "info": "INFO"}
# The node fields the processing hooks read (rules read the whole node).
_HOOK_FIELDS = "uuid,name,properties,provision_state"


NO_POWER_DISCOVERED = ("an auto-discovered node: nobody booted it through its BMC, and its "
                       "BMC credentials are unchecked (the node is quarantined until approved)")


class RuleFailed(Invalid):
    """A rule's `fail` action: the introspection ends in error with its message (which
    names the rule)."""


def _property_ops(properties: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"op": "add", "path": f"/properties/{key.replace('~', '~0').replace('/', '~1')}",
             "value": value} for key, value in properties.items()]


@dataclass(frozen=True)
class _Caller:
    """Who called back, as a refusal's record names it."""

    kind: str  # report, hello
    macs: list[str]
    bmc: str | None
    address: str | None


class Processor:
    def __init__(self, conf: Config, cache: NodeCache, ironic: BareMetal,
                 hooks: list[ProcessingHook], introspector: Introspector,
                 workers: WorkerPool, rules: RuleRunner | None = None,
                 rejections: Rejections | None = None,
                 discovery: Discovery | None = None) -> None:
        self.conf = conf
        # callbacks refused before they changed anything, for the operator to read
        self.rejections = rejections or Rejections(cache.db)
        # reports of machines under no introspection, with [auto_discovery] on
        self.discovery = discovery or Discovery(conf, cache, ironic,
                                                refusals=self.rejections.counts)
        self.rules = rules  # None: no inspection rules (unit tests of the hooks alone)
        self.cache = cache
        self.ironic = ironic
        self.hooks = hooks
        self.introspector = introspector
        self.lifecycle = introspector.lifecycle
        self.workers = workers
        # what each inspection changed of the hardware (components.py), kept per run
        self.component_events = ComponentEvents(cache.db)

    async def process(self, raw: Any, token: str | None = None,
                      address: str | None = None) -> dict[str, str]:
        """`token`: the callback token the report came with (None: none); `address`: where
        it came from (for the record of a refusal)."""
        logs = raw.pop("logs", None) if isinstance(raw, dict) else None
        data = formats.normalize(raw)
        ctx = ProcessingContext(self.conf, data)
        failures = self._run(ctx, "before_processing")
        inventory = ctx.inventory
        # From the validated inventory, never from keys a report could carry itself.
        macs = [str(i.get("mac_address", "")).lower() for i in inventory.get("interfaces") or []]
        bmcs = [a for a in (inventory.get("bmc_address"), inventory.get("bmc_v6address"))
                if a and a not in ("0.0.0.0", "::/0", "::")]
        caller = _Caller("report", macs, bmcs[0] if bmcs else None, address)
        try:
            uuid = await self._identify(caller, token, quiet=self.discovery.enabled)
        except NotFound:
            if not self.discovery.enabled:
                raise
            if failures:
                raise Invalid("; ".join(failures)) from None
            return await self._discover(ctx, raw, logs, address)
        authenticated = await self._authenticate(uuid, token, caller)
        if failures:
            message = "; ".join(failures)
            if not authenticated:
                if (await self.cache.get(uuid)).state not in (states.STARTING, states.WAITING):
                    raise await self._not_accepting(uuid, caller)
                LOG.warning("Node %s: unauthenticated error report (no callback token) "
                            "ignored; the introspection keeps waiting: %s", uuid, message)
                raise Invalid(f"{message} (without a callback token this report does not "
                              "end the introspection)")
            self._store_logs(uuid, logs, failed=True)
            if not await self.end_with_error(uuid, message, event="refuse",
                                             code=diagnosis.RAMDISK_ERROR):
                raise await self._not_accepting(uuid, caller)
            raise Invalid(message)
        stored = raw if self.conf.processing.store_data else None
        received = {"macs": macs, "model": model_of(inventory)}
        if not await self.cache.accept_report(uuid, stored, self.cache.owner,
                                              (diagnosis.REPORT_RECEIVED, received, None)):
            raise await self._not_accepting(uuid, caller)
        self._store_logs(uuid, logs, failed=False)
        self.lifecycle.spawn(uuid, lambda: self._complete(uuid, ctx), "processing")
        return {"uuid": uuid}

    async def _discover(self, ctx: ProcessingContext, raw: Any, logs: Any,
                        address: str | None) -> dict[str, str]:
        """A machine under no introspection (discovery.py): a node created for it is
        processed as an inspection's would be, marked `auto_discovered` for the rules."""
        stored = raw if self.conf.processing.store_data else None
        found = await self.discovery.handle(ctx.inventory, raw, stored, address)
        if found.outcome == CREATED:
            ctx.data["auto_discovered"] = True
            self._store_logs(found.uuid, logs, failed=False)
            self.lifecycle.spawn(found.uuid, lambda: self._complete(found.uuid, ctx),
                                 "processing")
        return {"uuid": found.uuid}

    async def resolve_conflict(self, conflict_id: int, resolution: str, node: str | None,
                               user: str | None) -> dict[str, Any]:
        """Resolve a discovery conflict (discovery.py); a new machine's node is processed
        from the stored report as a discovered node is."""
        found = await self.discovery.resolve(conflict_id, resolution, node, user)
        if found is not None and found.outcome == CREATED:
            _, raw = await self.discovery.conflicts.get(conflict_id)
            ctx = ProcessingContext(self.conf, formats.normalize(
                {k: v for k, v in raw.items() if k != "logs"}))
            failures = self._run(ctx, "before_processing")
            if failures:
                await self.end_with_error(found.uuid, "; ".join(failures))
            else:
                ctx.data["auto_discovered"] = True
                self.lifecycle.spawn(found.uuid, lambda: self._complete(found.uuid, ctx),
                                     "processing")
        return {"id": conflict_id, "resolution": resolution,
                "node": found.uuid if found is not None else None}

    async def hello(self, data: dict[str, Any], token: str | None,
                    address: str | None) -> str:
        """The ramdisk's agent is up (before it collects anything): the `hello` phase of
        the node's attempt. The UUID."""
        uuid, macs = await self._ramdisk_call("hello", data, token, address)
        await self.cache.timeline.record(uuid, diagnosis.HELLO, "ramdisk",
                                         {"address": address, "macs": macs})
        LOG.info("Node %s: the ramdisk said hello from %s", uuid, address)
        return uuid

    async def beat(self, data: dict[str, Any], token: str | None,
                   address: str | None) -> str:
        """A progress beat of the ramdisk's agent: its stage and its log's new lines, kept
        with the node's attempt (the last 64 KiB). The UUID."""
        stage, text = data.get("stage"), data.get("log", "")
        if not isinstance(stage, str) or not 0 < len(stage) <= 32:
            raise Invalid("Field 'stage' must be a string of 1 to 32 characters")
        if not isinstance(text, str):
            raise Invalid("Field 'log' must be a string")
        uuid, _ = await self._ramdisk_call("beat", data, token, address)
        await self.cache.timeline.append_log(uuid, stage, text)
        return uuid

    async def _ramdisk_call(self, kind: str, data: dict[str, Any], token: str | None,
                            address: str | None) -> tuple[str, list[str]]:
        """Whose a hello or a beat is (the UUID, and its first 64 MACs): only with the
        attempt's callback token, only while the introspection waits for its ramdisk;
        anything else is refused (and recorded) and changes nothing."""
        macs = data.get("macs")
        if not isinstance(macs, list) or not all(isinstance(m, str) for m in macs) or not macs:
            raise Invalid("Field 'macs' must be a non-empty list of MAC addresses")
        caller = _Caller(kind, [m.lower() for m in macs[:64]], None, address)
        # an unknown machine's agent says hello too: with discovery on, that is no refusal
        uuid = await self._identify(caller, token, quiet=self.discovery.enabled)
        if token is None:
            message = (f"A {kind} needs the boot's callback token ({callback_token.HEADER} "
                       "header)")
            self._refused(caller, diagnosis.MISSING_TOKEN, message, uuid)
            raise callback_token.TokenRefused(message)
        await self._authenticate(uuid, token, caller)
        if (await self.cache.get(uuid)).state not in (states.STARTING, states.WAITING):
            raise await self._not_accepting(uuid, caller)
        return uuid, macs[:64]

    async def _identify(self, caller: _Caller, token: str | None, quiet: bool = False) -> str:
        """The introspection the caller's MACs and BMC address name; a lookup that fails
        (none, or several) is recorded as refused, unless `quiet` for none (discovery
        decides about those)."""
        try:
            return await self.cache.lookup(caller.macs,
                                           [caller.bmc] if caller.bmc is not None else [])
        except NotFound as exc:
            if not quiet:
                self._refused(caller, diagnosis.LOOKUP_FAILED_REASON, exc.message)
            raise
        except Invalid as exc:
            self._refused(caller, diagnosis.AMBIGUOUS, exc.message)
            raise

    def _refused(self, caller: _Caller, reason: str, message: str,
                 uuid: str | None = None) -> None:
        self.rejections.note(caller.kind, reason, message, macs=caller.macs,
                             bmc_address=caller.bmc, source_address=caller.address, uuid=uuid)

    async def _authenticate(self, uuid: str, token: str | None,
                            caller: _Caller | None = None) -> bool:
        """Whether the report carries the introspection's callback token. A wrong one is
        refused (403, nothing changed); none is refused too unless tokenless reports are
        allowed, and then False: such a report may deliver data but never end anything."""
        if token is not None:
            if callback_token.matches(await self.cache.callback_token_hash(uuid), token):
                return True
            LOG.warning("Node %s: ramdisk report refused: its callback token does not match "
                        "the current introspection's", uuid)
            message = ("The callback token does not match the node's introspection (a token "
                       "is valid only for the boot and the introspection it was issued for)")
            if caller is not None:
                self._refused(caller, diagnosis.BAD_TOKEN, message, uuid)
            raise callback_token.TokenRefused(message)
        if self.conf.introspection.allow_tokenless_reports:
            return False
        LOG.warning("Node %s: ramdisk report without a callback token refused", uuid)
        message = ("Ramdisk report refused: it carries no callback token "
                   f"({callback_token.HEADER} header), and [introspection] "
                   "allow_tokenless_reports is false")
        if caller is not None:
            self._refused(caller, diagnosis.MISSING_TOKEN, message, uuid)
        raise callback_token.TokenRefused(message)

    async def _not_accepting(self, uuid: str, caller: _Caller | None = None) -> Invalid:
        """A report for an introspection that takes none now (a late or repeated one): it
        changes nothing, and is answered and logged as such."""
        intro = await self.cache.get(uuid)
        LOG.warning("Node %s: ramdisk %s ignored: the introspection is %s", uuid,
                    caller.kind if caller else "report", intro.state)
        message = (f"Introspection of node {uuid} is {intro.state}; "
                   "it does not accept ramdisk data now")
        if caller is not None:
            self._refused(caller, diagnosis.WRONG_STATE, message, uuid)
        return Invalid(message)

    async def _complete(self, uuid: str, ctx: ProcessingContext) -> None:
        try:
            await self._update_node(uuid, ctx)
        except DatabaseUnavailable:
            raise  # not the report's failure: the step runs again (Introspector.spawn)
        except IronsightError as exc:
            await self.end_with_error(uuid, f"Failed to process the ramdisk data: {exc}",
                                      code=diagnosis.RULE_FAILED if isinstance(exc, RuleFailed)
                                      else diagnosis.PROCESSING_FAILED)
            return
        await self.finish(uuid, processed_at=utcnow(),
                          no_power=NO_POWER_DISCOVERED if ctx.data.get("auto_discovered")
                          else None)

    def _run(self, ctx: ProcessingContext, step: str) -> list[str]:
        """Run one step of every hook; a hook that fails, however it fails, is reported by
        name (a buggy hook must end the introspection, not leave it `processing`). A hook
        that needs a fact a failed hook did not provide is skipped: its failure would only
        repeat the first one."""
        failures: list[str] = []
        lost: set[Fact[Any]] = set()
        for hook in self.hooks:
            if lost.intersection(hook.requires):
                lost.update(hook.provides)
                continue
            try:
                getattr(hook, step)(ctx)
            except Invalid as exc:
                failures.append(str(exc) if isinstance(exc, ReportedError)
                                else f"{hook.name}: {exc}")
                lost.update(hook.provides)
            except Exception as exc:
                LOG.exception("Processing hook %s crashed", hook.name)
                failures.append(f"{hook.name}: unexpected error: {exc!r}")
                lost.update(hook.provides)
        return failures

    async def _update_node(self, uuid: str, ctx: ProcessingContext) -> None:
        rules = await self.rules.current() if self.rules is not None else []
        # Rules may read any field of the node: then the whole node, else only what hooks read.
        ctx.node, ctx.ports = await self.ironic.node_with_ports(
            uuid, fields=None if rules else _HOOK_FIELDS)
        if any(hook.uses_previous_report for hook in self.hooks):
            ctx.previous = await self._previous_report(uuid)
        failures = self._run(ctx, "before_update")
        if failures:
            raise Invalid("; ".join(failures))
        outcome, processed = await self._write(uuid, ctx, rules, ctx.processed_data())
        processed["changes"] = {"properties": ctx.changes.properties,
                                "created_ports": sorted(ctx.changes.create_ports),
                                "deleted_ports": ctx.changes.delete_ports,
                                "warnings": ctx.changes.warnings}
        if self.conf.processing.store_data:
            await self.cache.store_data(uuid, processed, processed=True)
            await self._hardware_changes(uuid)
        if outcome is not None and outcome.failure:
            raise RuleFailed(outcome.failure)
        LOG.info("Node %s: properties %s, ports created %s", uuid, ctx.changes.properties,
                 sorted(ctx.changes.create_ports))

    async def _hardware_changes(self, uuid: str) -> None:
        """The components added, removed or changed since the node's previous stored run
        (none on a first inspection): kept with their run (a reapply replaces them), and
        told in the node's history, worst severity first, when there are any."""
        if len(await self.cache.processed_runs(uuid, 2)) < 2:
            return  # on the hot path of every first inspection: no data decoded
        (run, after), (_, before) = await self.cache.last_processed(uuid, 2)
        events = components.events(before, after)
        if not events and not await self.component_events.has_run(uuid, run):
            return
        async with self.cache.db.begin() as conn:
            shown = await self.component_events.record(conn, uuid, run, events)
            if shown and self.discovery.webhooks is not None:  # sent with the events, or not
                await self.discovery.webhooks.enqueue(conn, [
                    Event(f"component.{e['change']}", uuid, e) for e in shown])
        if events:
            worst = min(SEVERITY_ORDER.index(e.severity) for e in events)
            text = "; ".join(components.summary(events)) or "; ".join(
                e.message for e in events[:5])
            try:
                await self.ironic.add_history(
                    uuid, f"Hardware changed since the last inspection: {text}"[:1024],
                    HISTORY_SEVERITY[SEVERITY_ORDER[worst]])
            except IronicError as exc:  # the events are kept (above): only the line is lost
                LOG.warning("Node %s: the hardware change was not recorded in its history: %s",
                            uuid, exc)

    async def _previous_report(self, uuid: str) -> dict[str, Any] | None:
        """The raw report of the run before the one being processed (whose own report is
        the newest stored), or None when none is kept. Without store_data the report being
        processed is not stored, so which stored run came before it is unknown: None."""
        if not self.conf.processing.store_data:
            return None
        runs = [run for run in await self.cache.history(uuid) if run.received_at]
        if len(runs) < 2:
            return None
        previous = await self.cache.get_run_data(uuid, runs[1].run, processed=False)
        return dict(previous) if isinstance(previous, dict) else None

    async def _write(self, uuid: str, ctx: ProcessingContext, rules: list[Rule],
                     processed: dict[str, Any]) -> tuple[Outcome | None, dict[str, Any]]:
        """The one write path of a report's results, rules or none: the ports the hooks
        decided are deleted and created first (so that rules see, and may set attributes of,
        the ports the node ends up with); then the rules run on the node as the hooks leave
        it; last, the ports' patches, the node's fields, its traits and the history event (it
        says what was changed) in one request. A rule's `fail` writes
        nothing of the node's own fields; its traces are stored with the processed data (see
        `_update_node`). The outcome of the rules (None without rules) and the data to
        store."""
        changes = ctx.changes
        ports = await self._apply_ports(uuid, ctx.ports, changes)
        outcome: Outcome | None = None
        if rules:
            assert self.rules is not None
            inventory = processed.get("inventory") or {}
            plugin_data = {k: v for k, v in processed.items()
                           if k not in ("inventory", "rules")}
            facts = Facts(node=with_properties(ctx.node, changes.properties),
                          inventory=inventory, plugin_data=plugin_data,
                          ports=[patched(p, changes.port_patches.get(p["uuid"], []))
                                 for p in ports])
            # Stored for every report: rules that did not match are traced in short.
            outcome = await self.rules.run(rules, facts, node_uuid=uuid, compact=True)
            processed = {**outcome.plugin_data, "inventory": inventory,
                         "rules": [t.to_dict() for t in outcome.traces]}
            if outcome.failure:
                return outcome, processed
        port_patches: dict[str, list[dict[str, Any]]] = {}
        doomed = set(changes.delete_ports)
        for source in (changes.port_patches, outcome.port_patches if outcome else {}):
            for port_uuid, ops in source.items():
                if port_uuid not in doomed:
                    port_patches.setdefault(port_uuid, []).extend(ops)
        await self.ironic.apply_changes(
            uuid, [*_property_ops(changes.properties), *(outcome.node_patch if outcome else [])],
            add_traits=outcome.traits_add if outcome else (),
            remove_traits=outcome.traits_remove if outcome else (),
            event=summary(outcome) if outcome else None,
            port_patches={k: v for k, v in port_patches.items() if v})
        return outcome, processed

    async def _apply_ports(self, uuid: str, ports: list[dict[str, Any]],
                           changes: Changes) -> list[dict[str, Any]]:
        """Delete and create the ports the hooks decided; the node's ports after that."""
        for port_uuid in changes.delete_ports:
            await self.ironic.delete_port(port_uuid)
        gone = set(changes.delete_ports)
        result = [p for p in ports if p.get("uuid") not in gone]
        for mac, pxe in changes.create_ports.items():
            try:
                result.append(await self.ironic.create_port(uuid, mac, pxe,
                                                            changes.port_fields.get(mac)))
            except IronsightError as exc:
                if exc.code != 409:
                    raise
                changes.warnings.append(f"Port {mac} not created: {exc}")
                LOG.warning("Node %s: port %s not created: %s", uuid, mac, exc)
        return result

    async def finish(self, uuid: str, processed_at: dt.datetime | None = None,
                     no_power: str | None = None) -> None:
        """Power off (when discoverd booted the node), then the end; `processed_at`: when
        the processing ended, a step of the timeline written with the end; `no_power`: why
        no power action is even tried (a step of the timeline too)."""
        done: list[Step] = ([(diagnosis.PROCESSING_DONE, None, processed_at)] if processed_at
                            else [])
        if no_power is not None:
            done.append((diagnosis.POWER_OFF_SKIPPED, {"reason": no_power}, processed_at))
            LOG.info("Node %s: no power-off: %s", uuid, no_power)
        intro = await self.cache.get(uuid)
        if self.conf.processing.power_off and intro.manage_boot:
            error = await self.lifecycle.power_off(uuid, why="introspection finished",
                                                      steps=done)
            if error:
                if done:
                    await self.cache.timeline.record_many(uuid, "discoverd", done)
                await self.end_with_error(uuid, error, code=diagnosis.POWER_FAILED)
                return
        if await self.cache.transition(uuid, "finish", before=done):
            await self.lifecycle.notify()
            LOG.info("Node %s: introspection finished", uuid)

    async def end_with_error(self, uuid: str, message: str, event: str = "error",
                             code: str = diagnosis.PROCESSING_FAILED) -> bool:
        """End the introspection in error (see `Introspector.fail`) with failure `code` and
        power the node off; False when it was not in a state `event` leaves."""
        intro = await self.cache.get(uuid)
        if not await self.lifecycle.fail(uuid, message, event, code=code):
            return False
        if intro.manage_boot and self.conf.processing.power_off:
            self.workers.spawn(lambda: self._power_off_quietly(uuid), name=f"off:{uuid}")
        return True

    async def _power_off_quietly(self, uuid: str) -> None:
        await self.lifecycle.power_off(uuid, why="introspection failed")

    # --- reapply --------------------------------------------------------------------------

    async def reapply(self, uuid: str, new_data: Any | None) -> None:
        """Run the hooks again on stored (or given) raw data; no power action."""
        intro = await self.cache.get(uuid)
        if intro.state not in states.ALLOWED_FROM["reapply"]:
            raise Invalid(f"Can not reapply introspection of node {uuid} in state "
                          f"\"{intro.state}\" (only finished or error)")
        if new_data is not None:
            if isinstance(new_data, dict):
                new_data = {k: v for k, v in new_data.items() if k != "logs"}
            formats.normalize(new_data)  # refuse bad data before anything changes
        elif not self.conf.processing.store_data:
            raise Invalid("Cannot reapply: [processing] store_data is off, so no raw data "
                          "is kept; post the data in the request body")
        else:
            await self.cache.get_data(uuid, processed=False)  # 404 when none
        if not await self.cache.transition(uuid, "reapply", owner=self.cache.owner):
            intro = await self.cache.get(uuid)
            raise Invalid(f"Can not reapply introspection of node {uuid} in state "
                          f"\"{intro.state}\" (only finished or error)")
        if new_data is not None and self.conf.processing.store_data:
            await self.cache.store_data(uuid, new_data, processed=False)
        self.lifecycle.spawn(uuid, lambda: self.run_reapply(uuid, new_data), "reapply")

    async def run_reapply(self, uuid: str, data: Any | None = None) -> None:
        if await self._rerun(uuid, "Reapply failed", data):
            # a reapply of an ended attempt: its timeline ended already
            await self.cache.transition(uuid, "finish", timeline=False)

    async def run_reapply_from_processing(self, uuid: str) -> None:
        """After a restart in the middle of processing: process the stored report again,
        then power off and finish as the interrupted run would have."""
        if await self._rerun(uuid, "Processing after a restart failed"):
            await self.finish(uuid, processed_at=utcnow())

    async def _rerun(self, uuid: str, what: str, data: Any | None = None) -> bool:
        try:
            raw = dict(data if data is not None
                       else await self.cache.get_data(uuid, processed=False))
            raw.pop("logs", None)
            ctx = ProcessingContext(self.conf, formats.normalize(raw))
            failures = self._run(ctx, "before_processing")
            if failures:
                raise Invalid("; ".join(failures))
            await self._update_node(uuid, ctx)
        except IronsightError as exc:
            await self.end_with_error(uuid, f"{what}: {exc}")
            return False
        return True

    # --- ramdisk logs ---------------------------------------------------------------------

    def _store_logs(self, uuid: str, logs: Any, *, failed: bool) -> None:
        """Write the ramdisk's logs to their own file (never to the service log)."""
        if not logs or not (failed or self.conf.introspection.always_store_ramdisk_logs):
            return
        try:
            blob = base64.b64decode(str(logs), validate=True)
        except (binascii.Error, ValueError):
            LOG.warning("Node %s: ramdisk logs are not valid base64; not stored", uuid)
            return
        directory: Path = self.conf.ramdisk_logs_dir
        private_dir(directory)  # logs may hold what the ramdisk saw (keys, addresses)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S.%f")
        path = directory / f"{uuid}_{stamp}.tar.gz"
        create_private(path, blob)
        LOG.info("Node %s: ramdisk logs stored in %s", uuid, path)
