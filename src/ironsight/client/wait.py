"""Waiting for the services to finish what they were asked: one polling loop for every caller.

The CLI's `--wait`, the lab, the demo and the benchmarks all ask the same question: poll until
every node (or introspection) has settled, then say which ones failed. They differ only in
what they read and in what counts as done, so the loop is written once (`until`, and `poll`
on top of it) with the clock, the sleep and the interval injected (`Poller`: tests use a fake
clock) and progress handed to a callback (nothing is printed here). Its users are thin:
`wait_for_nodes` reads the bare-metal API's state fields, `wait_for_introspection` reads
discoverd's batched status.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ironsight.client.http import ApiClient, is_uuid, node_path

if TYPE_CHECKING:  # types only: the lab's processes wait without loading aiohttp
    from ironsight.discoverd.client import Client as DiscoverdClient
    from ironsight.discoverd.client import Status

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)
Node = dict[str, Any]
Progress = Callable[[str], None]

# From this many nodes on, a wait reads pages of the node list instead of one GET per node.
# A full page (PAGE_SIZE nodes) costs the service roughly what one or two dozen GETs do
# (bench_api: ~11 ms against ~0.5 ms), so a few nodes are still read one GET each.
BATCH_FROM = 10
PAGE_SIZE = 1000


@dataclass(frozen=True)
class Poller:
    """How often, and by which clock, a wait polls: what tests replace."""

    interval: float = 2.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], object] = time.sleep  # `threading.Event.wait` fits: stops early


DEFAULT_POLLER = Poller()


def until(done: Callable[[], bool], timeout: float, poller: Poller = DEFAULT_POLLER) -> bool:
    """Call `done` (one poll each) until it returns True: then True; False once `timeout`
    seconds have passed (0: no limit). The last sleep is cut short so that the last poll
    falls on the deadline rather than after it."""
    deadline = poller.clock() + timeout if timeout > 0 else None
    while not done():
        now = poller.clock()
        if deadline is not None and now >= deadline:
            return False
        remaining = deadline - now if deadline is not None else poller.interval
        poller.sleep(min(poller.interval, remaining))
    return True


class Verdict(enum.Enum):
    """What one observation says of the thing waited for."""

    WAITING = "waiting"
    REACHED = "reached"
    FAILED = "failed"


class Condition(Protocol[T_contra]):
    """What a wait is for: when an observation ends it, and the words for each outcome."""

    def verdict(self, observed: T_contra) -> Verdict: ...

    def progress(self, key: str, observed: T_contra) -> str | None:
        """The progress line for this observation (None: nothing to say)."""
        ...

    def failure(self, key: str, observed: T_contra) -> str: ...

    def timed_out(self, key: str, observed: T_contra, timeout: float) -> str: ...


@dataclass
class Outcome(Generic[T]):
    """How a wait ended. `failures` holds the messages: the failed keys' in the order they
    failed, then the timed-out keys'; empty when every key was reached."""

    last: dict[str, T] = field(default_factory=dict)  # the last observation of each key
    reached: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    timed_out: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def poll(keys: Sequence[str], fetch: Callable[[Sequence[str]], Mapping[str, T]],
         condition: Condition[T], timeout: float, poller: Poller = DEFAULT_POLLER,
         progress: Progress | None = None, *, stop_on_failure: bool = False) -> Outcome[T]:
    """Observe the pending keys (`fetch` answers for all of them at once, so that it can batch)
    until each is reached or failed, or until `timeout` (0: no limit).

    `progress` gets a key's line each time it changes. With `stop_on_failure` the wait ends at
    the first failure; keys still pending then are in neither `reached` nor `timed_out`.
    """
    outcome: Outcome[T] = Outcome()
    pending = list(keys)
    lines: dict[str, str] = {}

    def attempt() -> bool:
        observed = fetch(list(pending))
        for key in list(pending):
            seen = outcome.last[key] = observed[key]
            line = condition.progress(key, seen)
            if progress is not None and line is not None and lines.get(key) != line:
                lines[key] = line
                progress(line)
            verdict = condition.verdict(seen)
            if verdict is Verdict.WAITING:
                continue
            pending.remove(key)
            if verdict is Verdict.REACHED:
                outcome.reached.append(key)
                continue
            outcome.failed.append(key)
            outcome.failures.append(condition.failure(key, seen))
            if stop_on_failure:
                return True
        return not pending

    if not until(attempt, timeout, poller):
        outcome.timed_out = list(pending)
        outcome.failures += [condition.timed_out(key, outcome.last[key], timeout)
                             for key in pending]
    return outcome


# --- bare-metal nodes --------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeWatch:
    """Which fields of a node an action moves, and where it should settle.

    A node has settled when its target field is empty. It has then reached the watch when its
    state is one of `expected` and `settled` (what the state field does not say, like the
    power of a node just inspected) holds. Any other settled state is a failure, or, given
    `failed_states`, only those are and the wait goes on through the others.
    """

    state_field: str
    target_field: str
    expected: tuple[str, ...]
    label: str
    failed_states: frozenset[str] | None = None
    settled: Callable[[Node], bool] | None = None
    # What else `settled` (or the caller, in `Outcome.last`) reads: a batched read asks for
    # these fields only; None for whole documents (the detailed list).
    fields: tuple[str, ...] | None = ()

    @classmethod
    def provision(cls, *expected: str, failed_states: frozenset[str] | None = None,
                  settled: Callable[[Node], bool] | None = None,
                  fields: tuple[str, ...] | None = ()) -> NodeWatch:
        return cls("provision_state", "target_provision_state", expected, "provision state",
                   failed_states, settled, fields)

    @classmethod
    def power(cls, expected: str) -> NodeWatch:
        return cls("power_state", "target_power_state", (expected,), "power state")

    @property
    def read_fields(self) -> tuple[str, ...] | None:
        if self.fields is None:
            return None
        return (self.state_field, self.target_field, "last_error", *self.fields)

    def verdict(self, node: Node) -> Verdict:
        if node.get(self.target_field):
            return Verdict.WAITING
        state = node.get(self.state_field)
        if state in self.expected:
            ok = self.settled is None or self.settled(node)
            return Verdict.REACHED if ok else Verdict.WAITING
        if self.failed_states is None or state in self.failed_states:
            return Verdict.FAILED
        return Verdict.WAITING

    def progress(self, key: str, node: Node) -> str:
        line = f"node {key}: {self.label} {node.get(self.state_field)}"
        target = node.get(self.target_field)
        return f"{line} (target {target})" if target else line

    def failure(self, key: str, node: Node) -> str:
        reason = node.get("last_error") or "no error reported"
        return f"node {key} ended in {self.label} {node.get(self.state_field)!r}: {reason}"

    def timed_out(self, key: str, node: Node, timeout: float) -> str:
        wanted = " or ".join(repr(state) for state in self.expected)
        return (f"timed out after {timeout:g} s waiting for node {key} to reach {wanted} "
                f"({self.label} {node.get(self.state_field)}, "
                f"target {node.get(self.target_field)})")


def read_nodes(api: ApiClient, nodes: Sequence[str], *, batched: bool = False,
               fields: Sequence[str] | None = None) -> dict[str, Node]:
    """The document of each node (by UUID or name): one GET each, or `batched`, pages of the
    node list (`fields` only, else the detailed list). A node the list lacks is still asked
    by GET, which says why it is missing."""
    if not batched:
        return {node: api.get(node_path(node)) for node in nodes}
    wanted = set(nodes)
    found: dict[str, Node] = {}
    params: dict[str, Any] = {"limit": PAGE_SIZE}
    if fields is not None:
        params["fields"] = ",".join(dict.fromkeys(("uuid", "name", *fields)))
    path = "/v1/nodes/detail" if fields is None else "/v1/nodes"
    for doc in api.iter_collection(path, "nodes", params):
        found.update((ident, doc) for ident in (doc.get("uuid"), doc.get("name"))
                     if ident in wanted)
        if len(found) == len(wanted):
            break
    return {node: found[node] if node in found else api.get(node_path(node)) for node in nodes}


def wait_for_nodes(api: ApiClient, nodes: Sequence[str], watch: NodeWatch, timeout: float,
                   poller: Poller = DEFAULT_POLLER, progress: Progress | None = None, *,
                   stop_on_failure: bool = False, batched: bool | None = None
                   ) -> Outcome[Node]:
    """Poll the nodes until each has settled (see `NodeWatch`); `timeout` 0: no limit.

    `batched` (by default: from BATCH_FROM nodes on) reads pages of the node list at each
    poll, one request per PAGE_SIZE nodes of the service (`last` then holds the watch's
    `read_fields` only, unless its `fields` is None); else one GET per pending node.
    """
    if batched is None:
        batched = len(nodes) >= BATCH_FROM
    return poll(nodes, lambda pending: read_nodes(api, pending, batched=batched,
                                                  fields=watch.read_fields),
                watch, timeout, poller, progress, stop_on_failure=stop_on_failure)


# --- discoverd introspections --------------------------------------------------------------


@dataclass(frozen=True)
class IntrospectionWatch:
    """Until each introspection is finished (an error fails it), or has reached `wanted`.

    A node discoverd does not know fails at once (there is nothing to wait for), unless
    `unknown_pending`: when something else starts the introspections (the bare-metal service
    does, asynchronously), discoverd may not know a node yet.
    """

    wanted: str | None = None
    unknown_pending: bool = False

    def verdict(self, status: Status | None) -> Verdict:
        if status is None:
            return Verdict.WAITING if self.unknown_pending else Verdict.FAILED
        if self.wanted is None:
            if not status.get("finished"):
                return Verdict.WAITING
            return Verdict.FAILED if status.get("error") else Verdict.REACHED
        if status.get("state") == self.wanted:
            return Verdict.REACHED
        return Verdict.FAILED if status.get("finished") else Verdict.WAITING

    def progress(self, key: str, status: Status | None) -> str | None:
        return None if status is None else f"node {key}: introspection {status.get('state')}"

    def failure(self, key: str, status: Status | None) -> str:
        if status is None:
            return f"discoverd has no introspection of node {key}"
        if status.get("error"):
            return f"introspection of node {key} failed: {status['error']}"
        return f"introspection of node {key} ended in state {status.get('state')!r}"

    def timed_out(self, key: str, status: Status | None, timeout: float) -> str:
        state = status.get("state") if status is not None else None
        return (f"timed out after {timeout:g} s waiting for introspection of node {key} "
                f"(state {state})")


def wait_for_introspection(api: DiscoverdClient, nodes: Sequence[str], timeout: float,
                           poller: Poller = DEFAULT_POLLER, progress: Progress | None = None,
                           *, wanted: str | None = None, unknown_pending: bool = False,
                           stop_on_failure: bool = False) -> Outcome[Status]:
    """Poll discoverd (one batched status request per 100 pending nodes) until each node's
    introspection is finished, or in state `wanted` (see `IntrospectionWatch`); `timeout`
    0: no limit.

    Names are resolved to UUIDs once (the batched call takes UUIDs). `last` holds the last
    status discoverd gave for each node.
    """
    uuids = {node: node if is_uuid(node) else str(api.get_status(node)["uuid"])
             for node in nodes}
    known: dict[str, Status] = {}

    def fetch(pending: Sequence[str]) -> dict[str, Status | None]:
        statuses = api.get_statuses([uuids[node] for node in pending])
        found = {node: statuses.get(uuids[node]) for node in pending}
        known.update((node, status) for node, status in found.items() if status is not None)
        return found

    watch = IntrospectionWatch(wanted, unknown_pending)
    polled = poll(nodes, fetch, watch, timeout, poller, progress,
                  stop_on_failure=stop_on_failure)
    return Outcome(known, polled.reached, polled.failed, polled.timed_out, polled.failures)
