"""Client library for discoverd's inspector-v1-compatible API (as `ironic_discoverd.client`).

The bare-metal service and the operator side (`ironsight.client`, the CLI) call it. Calls
have a bounded timeout. Failures come in two kinds, so a caller can tell "discoverd is down"
(`ServiceUnavailable`: no HTTP answer, retry later) from "discoverd said no" (`ClientError`
with the HTTP status and the server's message).

Connections: the module-level functions keep no global state; each one opens a short-lived
connection and closes it. A caller that polls often (the conductor's periodic status check)
should keep a `Client` (sync) or `AsyncClient` (asyncio), which pool connections until closed.

Every operation is written once, as a generator that yields `_Call`s (an HTTP request) and
`_Sleep`s and receives the decoded answers; `Client` and `AsyncClient` only run that
generator with blocking or awaited I/O.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import ssl
import time
from collections.abc import (
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote

import aiohttp
import httpx

from ironsight.common.api.errors import error_message
from ironsight.common.api.pagination import next_query
from ironsight.common.auth.credentials import Credentials
from ironsight.common.exceptions import IronsightError

__version_info__ = (1, 1, 0)  # 1.1: inspection rules, forward()
__version__ = ".".join(map(str, __version_info__))

DEFAULT_URL = "http://127.0.0.1:5050/v1"
DEFAULT_TIMEOUT = 10.0
API_VERSION = "1.18"
VERSION_HEADER = "X-OpenStack-Ironic-Inspector-API-Version"
CALLBACK_TOKEN_HEADER = "X-Ironsight-Callback-Token"  # as discoverd.callback_token.HEADER
STATUS_CHUNK = 100  # UUIDs per batched status request: keeps the URL under ~4 KB
DEFAULT_MAX_RETRIES = 3600

T = TypeVar("T")
Status = dict[str, Any]


class ClientError(Exception):
    """discoverd answered with an error (or, for the subclass, not at all)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(f"{message} (HTTP {status_code})" if status_code else message)
        self.message = message
        self.status_code = status_code


class ServiceUnavailable(ClientError):
    """No HTTP answer: connection refused, timed out, reset... Worth retrying later."""

    def __init__(self, message: str) -> None:
        super().__init__(message, None)


class WaitTimeoutError(Exception):
    """`wait_for_finish` ran out of retries; `statuses` holds the last status of each node."""

    def __init__(self, unfinished: list[str], statuses: dict[str, Status]) -> None:
        super().__init__(
            "timed out waiting for introspection to finish on: " + ", ".join(unfinished)
        )
        self.unfinished = unfinished
        self.statuses = statuses


# --- requests, answers and the operations ---------------------------------------------------


@dataclass(frozen=True)
class _Call:
    method: str
    path: str  # relative to the `/v1` base URL, segments already quoted
    params: dict[str, str] = field(default_factory=dict)
    body: Any = None
    has_body: bool = False
    headers: dict[str, str] = field(default_factory=dict)  # on top of the client's


@dataclass(frozen=True)
class _Sleep:
    seconds: float


_Op = Generator[_Call | _Sleep, Any, T]


@dataclass(frozen=True)
class RawAnswer:
    """An HTTP answer as received (`AsyncClient.forward`): header names in lower case."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    reason: str = ""


def normalize_url(base_url: str | None) -> str:
    """`http://host:5050`, `.../`, `.../v1` and `.../v1/` all mean the same API root."""
    url = (base_url or "").strip().rstrip("/") or DEFAULT_URL
    return url if url.endswith("/v1") else url + "/v1"


def _check_ident(uuid: Any) -> str:
    """Like ironic_discoverd.client: a non-string would be formatted into a wrong URL silently."""
    if not isinstance(uuid, str):
        raise TypeError(f"expected a string for the node UUID, got {uuid!r}")
    return uuid


def _check_idents(uuids: Iterable[str]) -> list[str]:
    """Strings only, without duplicates; a bare string would otherwise be split in chars."""
    if isinstance(uuids, str | bytes):
        raise TypeError(f"expected a list of node UUIDs, got the string {uuids!r}")
    return list(dict.fromkeys(_check_ident(u) for u in uuids))


def _node_path(uuid: str, *rest: str) -> str:
    return "/".join(["introspection", quote(_check_ident(uuid), safe=""), *rest])


def _decode(status: int, body: bytes, reason: str) -> Any:
    """The JSON body of a success (None when empty), or the error it carries."""
    if status >= 400:
        raise ClientError(error_message(body, reason or "no error message"), status)
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        raise ClientError("the response is not JSON", status) from None


def _unavailable(url: str, timeout: float, exc: Exception) -> ServiceUnavailable:
    """For either transport's failure (httpx's, or aiohttp's and its timeouts)."""
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return ServiceUnavailable(f"no answer from discoverd at {url} within {timeout:g} s")
    return ServiceUnavailable(f"cannot reach discoverd at {url}: {exc}")


def _introspect(uuid: str, manage_boot: bool | None,
                known: Mapping[str, Any] | None = None) -> _Op[None]:
    params = {} if manage_boot is None else {"manage_boot": str(manage_boot).lower()}
    if known is None:
        yield _Call("POST", _node_path(uuid), params)
    else:
        yield _Call("POST", _node_path(uuid), params, body=known, has_body=True)


def _get(path: str) -> _Op[Any]:
    return (yield _Call("GET", path))


def _get_query(path: str, params: dict[str, str]) -> _Op[Any]:
    return (yield _Call("GET", path, params))


def _post(path: str) -> _Op[None]:
    yield _Call("POST", path)


def _post_query(path: str, params: dict[str, str]) -> _Op[None]:
    yield _Call("POST", path, params)


def _post_body_for(path: str, body: Mapping[str, Any]) -> _Op[Any]:
    return (yield _Call("POST", path, body=body, has_body=True))


def _post_for(path: str) -> _Op[Any]:
    return (yield _Call("POST", path))


def _delete_one(path: str) -> _Op[None]:
    yield _Call("DELETE", path)


def _continue(data: Mapping[str, Any], token: str | None) -> _Op[Any]:
    headers = {CALLBACK_TOKEN_HEADER: token} if token is not None else {}
    return (yield _Call("POST", "/continue", body=data, has_body=True, headers=headers))


def _history(uuid: str) -> _Op[list[dict[str, Any]]]:
    return list(((yield _Call("GET", _node_path(uuid, "data", "history"))) or {})
                .get("history", []))


def _history_path(uuid: str, run: int, raw: bool) -> str:
    if isinstance(run, bool) or not isinstance(run, int):
        raise TypeError(f"expected an integer history id, got {run!r}")
    return _node_path(uuid, "data", "history", str(run), *(("unprocessed",) if raw else ()))


def _reapply(uuid: str, data: Mapping[str, Any] | None) -> _Op[None]:
    path = _node_path(uuid, "data", "unprocessed")
    yield _Call("POST", path, body=data, has_body=data is not None)


def _pages(params: dict[str, str], follow: bool) -> _Op[list[Status]]:
    """The statuses of `GET /introspection`, following `next` links when asked (as
    `next_query` says: their query only, against our own URL)."""
    items: list[Status] = []
    query: dict[str, str] | None = params
    seen: set[str] = set()
    while query is not None:
        page = (yield _Call("GET", "introspection", query)) or {}
        items.extend(page.get("introspection", []))
        query = next_query(page.get("next"), params, seen) if follow else None
    return items


def _list(marker: str | None, limit: int | None, state: str | Iterable[str] | None
          ) -> _Op[list[Status]]:
    params: dict[str, str] = {}
    if marker is not None:
        params["marker"] = _check_ident(marker)
    if limit is not None:
        params["limit"] = str(limit)
    if state is not None:
        params["state"] = state if isinstance(state, str) else ",".join(state)
    items = yield from _pages(params, follow=limit is None)
    return items if limit is None else items[:limit]


def _statuses(uuids: Iterable[str]) -> _Op[dict[str, Status]]:
    """Batched status, `STATUS_CHUNK` UUIDs a request; UUIDs discoverd does not know are absent.

    The answer is filtered to the UUIDs asked for, in case a server ignores the `uuid` filter.
    """
    wanted = _check_idents(uuids)
    found: dict[str, Status] = {}
    for start in range(0, len(wanted), STATUS_CHUNK):
        chunk = wanted[start:start + STATUS_CHUNK]
        items = yield from _pages({"uuid": ",".join(chunk)}, follow=True)
        found.update((s["uuid"], s) for s in items if s.get("uuid") in chunk)
    return {u: found[u] for u in wanted if u in found}


def _wait(uuids: Iterable[str], retry_interval: float, max_retries: int
          ) -> _Op[dict[str, Status]]:
    """Poll until every node is `finished` (which includes ended in error).

    A node discoverd does not know is an error (404), not something to wait for.
    """
    pending = _check_idents(uuids)
    done: dict[str, Status] = {}
    last: dict[str, Status] = {}
    for attempt in range(max(max_retries, 1)):
        if attempt:
            yield _Sleep(retry_interval)
        last = yield from _statuses(pending)
        missing = [u for u in pending if u not in last]
        if missing:
            raise ClientError(f"discoverd has no introspection of {', '.join(missing)}", 404)
        done.update((u, s) for u, s in last.items() if s.get("finished"))
        pending = [u for u in pending if u not in done]
        if not pending:
            return done
    raise WaitTimeoutError(pending, {**done, **last})


# --- inspection rules: both dialects (docs/rules.md) ---------------------------------------

#: The collection of each dialect's rules in discoverd's API.
RULE_COLLECTIONS = {"ironic": "inspection_rules", "inspector": "rules"}


def _rules_path(dialect: str, uuid: str | None = None) -> str:
    try:
        collection = RULE_COLLECTIONS[dialect]
    except KeyError:
        raise ValueError(f"unknown rule dialect {dialect!r} (one of: "
                         f"{', '.join(RULE_COLLECTIONS)})") from None
    return collection if uuid is None else f"{collection}/{quote(_check_ident(uuid), safe='')}"


def _create_rule(body: Mapping[str, Any], dialect: str) -> _Op[dict[str, Any]]:
    return dict((yield _Call("POST", _rules_path(dialect), body=dict(body), has_body=True))
                or {})


def _list_rules(dialect: str, detail: bool) -> _Op[list[dict[str, Any]]]:
    """Every rule of a dialect (Ironic's list pages are followed; the inspector's has none)."""
    if dialect == "inspector":
        return list(((yield _Call("GET", _rules_path(dialect))) or {}).get("rules", []))
    params = {"detail": "true"} if detail else {}
    items: list[dict[str, Any]] = []
    query: dict[str, str] | None = params
    seen: set[str] = set()
    while query is not None:
        page = (yield _Call("GET", _rules_path(dialect), query)) or {}
        items.extend(page.get("inspection_rules", []))
        query = next_query(page.get("next"), params, seen)
    return items


def _delete_rules(dialect: str) -> _Op[None]:
    yield _Call("DELETE", _rules_path(dialect))


def _dry_run(rule: str | Mapping[str, Any], node: str) -> _Op[dict[str, Any]]:
    body = {"node": _check_ident(node), "rule": rule if isinstance(rule, str) else dict(rule)}
    return dict((yield _Call("POST", "inspection_rules/dry_run", body=body, has_body=True))
                or {})


# --- clients --------------------------------------------------------------------------------


def _headers(auth_token: str | None, credentials: Credentials | None) -> dict[str, str]:
    headers = {"Accept": "application/json", VERSION_HEADER: API_VERSION}
    if auth_token:
        headers["X-Auth-Token"] = auth_token
    if credentials is not None:
        headers.update(credentials.headers())
    return headers


def _verify(base_url: str, credentials: Credentials | None) -> ssl.SSLContext | bool:
    """A context checking against the configured CA for HTTPS; the default otherwise."""
    if credentials is not None and base_url.startswith("https:"):
        return credentials.ssl_context()
    return True


def _request_args(call: _Call) -> dict[str, Any]:
    args: dict[str, Any] = {"params": call.params or None}
    if call.has_body:
        args["json"] = call.body
    if call.headers:
        args["headers"] = call.headers
    return args


class Client:
    """A connection pool to one discoverd; close it (or use `with`) when done."""

    def __init__(
        self,
        base_url: str | None = None,
        auth_token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        sleep_function: Callable[[float], None] = time.sleep,
        credentials: Credentials | None = None,
    ) -> None:
        self.base_url = normalize_url(base_url)
        self.timeout = timeout
        self._sleep = sleep_function
        self._http = httpx.Client(base_url=self.base_url,
                                  headers=_headers(auth_token, credentials), timeout=timeout,
                                  transport=transport, verify=_verify(self.base_url, credentials))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(self, call: _Call) -> Any:
        try:
            response = self._http.request(call.method, call.path, **_request_args(call))
        except httpx.TransportError as exc:
            raise _unavailable(self.base_url, self.timeout, exc) from exc
        return _decode(response.status_code, response.content, response.reason_phrase)

    def _run(self, op: _Op[T]) -> T:
        answer: Any = None
        try:
            while True:
                step = op.send(answer)
                if isinstance(step, _Sleep):
                    self._sleep(step.seconds)
                    answer = None
                else:
                    answer = self._send(step)
        except StopIteration as stop:
            return stop.value

    def introspect(self, uuid: str, manage_boot: bool | None = None) -> None:
        """Start introspection; `manage_boot=False` when the caller boots the ramdisk itself."""
        self._run(_introspect(uuid, manage_boot))

    def get_status(self, uuid: str) -> Status:
        return self._run(_get(_node_path(uuid)))

    def get_statuses(self, uuids: Iterable[str]) -> dict[str, Status]:
        return self._run(_statuses(uuids))

    def get_members(self) -> list[dict[str, Any]]:
        """discoverd's replicas and which serves the PXE side (an ironsight extension)."""
        return list((self._run(_get("members")) or {}).get("members", []))

    def get_rejected(self, limit: int | None = None, reason: str | None = None,
                     mac: str | None = None) -> list[dict[str, Any]]:
        """Refused ramdisk callbacks, newest first (an ironsight extension)."""
        params = {k: str(v) for k, v in (("limit", limit), ("reason", reason), ("mac", mac))
                  if v is not None}
        return list((self._run(_get_query("rejected", params)) or {}).get("rejected", []))

    def get_deadlines(self) -> dict[str, Any]:
        """The learned step deadlines and their settings (an ironsight extension)."""
        return dict(self._run(_get("deadlines")) or {})

    def get_board(self, limit: int | None = None) -> dict[str, Any]:
        """The running attempts by step, the quiet the longest first (an ironsight
        extension)."""
        params = {} if limit is None else {"limit": str(limit)}
        return dict(self._run(_get_query("board", params)) or {})

    def abort(self, uuid: str) -> None:
        self._run(_post(_node_path(uuid, "abort")))

    # --- auto-discovery (ironsight extensions) --------------------------------------------

    def get_discovery(self) -> dict[str, Any]:
        """Whether discovery is on, its outcomes, the discovered nodes' records."""
        return dict(self._run(_get("discovery")) or {})

    def get_discovery_conflicts(self, every: bool = False,
                                limit: int | None = None) -> list[dict[str, Any]]:
        params = {"all": "true" if every else "false"}
        if limit is not None:
            params["limit"] = str(limit)
        found = self._run(_get_query("discovery/conflicts", params)) or {}
        return list(found.get("conflicts", []))

    def resolve_discovery_conflict(self, conflict_id: int, resolution: str,
                                   node: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"resolution": resolution}
        if node is not None:
            body["node"] = node
        return dict(self._run(_post_body_for(f"discovery/conflicts/{int(conflict_id)}",
                                             body)) or {})

    def import_manifest(self, csv_text: str) -> dict[str, Any]:
        return dict(self._run(_post_body_for("discovery/manifest", {"csv": csv_text})) or {})

    def get_manifest_status(self) -> dict[str, Any]:
        return dict(self._run(_get("discovery/manifest")) or {})

    def get_non_unique_macs(self) -> dict[str, Any]:
        return dict(self._run(_get("discovery/non_unique_macs")) or {})

    # --- fleet queries (ironsight extensions, docs/fleet.md) ---------------------------------

    def fleet_query(self, where: str, limit: int = 1000, marker: str | None = None,
                    fields: Sequence[str] | None = None) -> dict[str, Any]:
        """One page of the nodes whose document matches the CEL expression `where`."""
        body: dict[str, Any] = {"where": where, "limit": limit}
        if marker is not None:
            body["marker"] = marker
        if fields:
            body["fields"] = list(fields)
        return dict(self._run(_post_body_for("fleet/query", body)) or {})

    def fleet_query_all(self, where: str,
                        fields: Sequence[str] | None = None) -> dict[str, Any]:
        """Every matching node, page after page (the counts are the last page's)."""
        nodes: list[dict[str, Any]] = []
        marker = None
        while True:
            page = self.fleet_query(where, marker=marker, fields=fields)
            nodes += page.get("nodes") or []
            marker = page.get("next_marker")
            if not marker:
                return {**page, "nodes": nodes}

    def fleet_document(self, node: str) -> dict[str, Any]:
        return dict(self._run(_get(f"fleet/nodes/{quote(node, safe='')}")) or {})

    def fleet_export(self, kind: str = "ndjson", where: str | None = None) -> Iterator[bytes]:
        """The fleet in one of fleet/export.py's formats, as the bytes arrive (streamed:
        10,000 nodes are never held whole)."""
        params = {"format": kind, **({"where": where} if where else {})}
        try:
            with self._http.stream("GET", "fleet/export", params=params,
                                   timeout=httpx.Timeout(self.timeout, read=None)) as resp:
                if resp.status_code >= 400:
                    _decode(resp.status_code, resp.read(), resp.reason_phrase)
                yield from resp.iter_bytes()
        except httpx.TransportError as exc:
            raise _unavailable(self.base_url, self.timeout, exc) from exc

    def fleet_events(self, **filters: str | int | None) -> list[dict[str, Any]]:
        """Component change events, newest first (filters: node, since, severity,
        component, change, limit)."""
        params = {k: str(v) for k, v in filters.items() if v is not None}
        return list((self._run(_get_query("fleet/events", params)) or {}).get("events", []))

    def fleet_drift(self, vendor: str | None = None,
                    product: str | None = None) -> list[dict[str, Any]]:
        params = {k: v for k, v in (("vendor", vendor), ("product", product)) if v}
        return list((self._run(_get_query("fleet/drift", params)) or {}).get("groups", []))

    # --- webhooks (ironsight extensions, docs/fleet.md) ------------------------------------

    def list_webhook_deliveries(self, status: str | None = None,
                                limit: int | None = None) -> list[dict[str, Any]]:
        """The webhook deliveries, newest first (without their payloads)."""
        params = {k: str(v) for k, v in (("status", status), ("limit", limit))
                  if v is not None}
        found = self._run(_get_query("webhooks/deliveries", params)) or {}
        return list(found.get("deliveries", []))

    def retry_webhook_delivery(self, delivery_id: int) -> dict[str, Any]:
        """Make a failed or pending delivery due now (admin)."""
        return dict(self._run(_post_for(
            f"webhooks/deliveries/{int(delivery_id)}/retry")) or {})

    def list_statuses(self, marker: str | None = None, limit: int | None = None,
                      state: str | Iterable[str] | None = None) -> list[Status]:
        """Newest first; every page when `limit` is None."""
        return self._run(_list(marker, limit, state))

    def get_data(self, uuid: str, raw: bool = False) -> Any:
        """Processed data, or with `raw` the ramdisk's data as it was received."""
        path = _node_path(uuid, "data", "unprocessed") if raw else _node_path(uuid, "data")
        return self._run(_get(path))

    def get_history(self, uuid: str) -> list[dict[str, Any]]:
        """The introspections whose data discoverd keeps for the node, newest first: `id`,
        `started_at`, `received_at`, `processed_at` (an ironsight extension)."""
        return self._run(_history(uuid))

    def get_history_data(self, uuid: str, run: int, raw: bool = False) -> Any:
        """The data of one of those introspections (processed, or with `raw` as received)."""
        return self._run(_get(_history_path(uuid, run, raw)))

    def reapply(self, uuid: str, data: Mapping[str, Any] | None = None) -> None:
        """Process the stored raw data again, or `data` instead (which replaces it)."""
        self._run(_reapply(uuid, data))

    def wait_for_finish(self, uuids: Iterable[str], retry_interval: float = 1,
                        max_retries: int = DEFAULT_MAX_RETRIES) -> dict[str, Status]:
        return self._run(_wait(uuids, retry_interval, max_retries))

    # Inspection rules. `dialect` is "ironic" (`/v1/inspection_rules`, Ironic's shape) or
    # "inspector" (`/v1/rules`, ironic-inspector's); each API shows its own dialect's rules.

    def create_rule(self, body: Mapping[str, Any], dialect: str = "ironic") -> dict[str, Any]:
        """The rule as discoverd stored it (with `warnings` when it names a path that no
        stored inventory has, Ironic dialect)."""
        return self._run(_create_rule(body, dialect))

    def list_rules(self, dialect: str = "ironic", detail: bool = False
                   ) -> list[dict[str, Any]]:
        return self._run(_list_rules(dialect, detail))

    def get_rule(self, uuid: str, dialect: str = "ironic") -> dict[str, Any]:
        return dict(self._run(_get(_rules_path(dialect, uuid))) or {})

    def delete_rule(self, uuid: str, dialect: str = "ironic") -> None:
        self._run(_delete_one(_rules_path(dialect, uuid)))

    def delete_all_rules(self, dialect: str = "ironic") -> None:
        """Every rule of the dialect but the built-in ones."""
        self._run(_delete_rules(dialect))

    def dry_run(self, rule: str | Mapping[str, Any], node: str) -> dict[str, Any]:
        """What a rule (a stored rule's UUID, or a rule body in either dialect) would do to a
        node's latest stored data, changing nothing."""
        return self._run(_dry_run(rule, node))


class AsyncClient:
    """`Client` for asyncio: the same methods, as coroutines.

    It sends with aiohttp: the bare-metal conductor starts introspections from many
    concurrent workers, and httpx's pool costs far more CPU per request there (its connection
    assignment scans every pooled connection for each request; bench/RESULTS.md). Passing an
    httpx `transport` (tests) uses httpx instead.
    """

    def __init__(
        self,
        base_url: str | None = None,
        auth_token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep_function: Callable[[float], Awaitable[None]] = asyncio.sleep,
        credentials: Credentials | None = None,
    ) -> None:
        self.base_url = normalize_url(base_url)
        self.timeout = timeout
        self._sleep = sleep_function
        self._headers = _headers(auth_token, credentials)
        self._verify = _verify(self.base_url, credentials)
        self._tokens = credentials.tokens if credentials is not None else None
        self._http = (httpx.AsyncClient(base_url=self.base_url, headers=self._headers,
                                        timeout=timeout, transport=transport)
                      if transport is not None else None)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        if self._session is not None:
            await self._session.close()

    async def _send(self, call: _Call) -> Any:
        if self._tokens is None:
            return await self._send_once(call, {})
        try:
            return await self._send_once(call, await self._auth())
        except ClientError as exc:
            if exc.status_code != 401:
                raise
        self._tokens.invalidate()  # a token refused (revoked, expired early): once more
        return await self._send_once(call, await self._auth())

    async def _auth(self) -> Mapping[str, str]:
        assert self._tokens is not None
        try:
            return await self._tokens.headers()
        except IronsightError as exc:  # Keystone down: as unavailable as discoverd itself
            raise ServiceUnavailable(f"no token to call discoverd with: {exc}") from None

    async def _send_once(self, call: _Call, auth: Mapping[str, str]) -> Any:
        answer = await self._exchange(call, auth)
        return _decode(answer.status, answer.body, answer.reason)

    async def _exchange(self, call: _Call, auth: Mapping[str, str]) -> RawAnswer:
        """One HTTP exchange, whatever its status; ServiceUnavailable when none happened."""
        if auth:
            call = dataclasses.replace(call, headers={**call.headers, **auth})
        if self._http is not None:
            try:
                response = await self._http.request(call.method, call.path,
                                                    **_request_args(call))
            except httpx.TransportError as exc:
                raise _unavailable(self.base_url, self.timeout, exc) from exc
            return RawAnswer(response.status_code,
                             {k.lower(): v for k, v in response.headers.items()},
                             response.content, response.reason_phrase)
        return await self._send_aiohttp(call)

    async def forward(self, method: str, path: str, params: Mapping[str, str] | None = None,
                      body: Any = None, *, has_body: bool = False) -> RawAnswer:
        """Pass a request on to discoverd and hand back its answer as it is, errors included
        (the bare-metal API's `/v1/inspection_rules` is discoverd's, forwarded): only "no
        answer at all" raises (ServiceUnavailable). `path` is relative to `/v1`, already
        quoted. A token discoverd refuses is renewed once, as for every other call."""
        call = _Call(method, path, dict(params or {}), body, has_body)
        auth = await self._auth() if self._tokens is not None else {}
        answer = await self._exchange(call, auth)
        if answer.status == 401 and self._tokens is not None:
            self._tokens.invalidate()
            answer = await self._exchange(call, await self._auth())
        return answer

    async def _send_aiohttp(self, call: _Call) -> RawAnswer:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers, timeout=aiohttp.ClientTimeout(total=self.timeout),
                connector=aiohttp.TCPConnector(ssl=self._verify))
        url = f"{self.base_url}/{call.path.lstrip('/')}"
        data = json.dumps(call.body) if call.has_body else None
        headers = {"Content-Type": "application/json"} if call.has_body else {}
        headers.update(call.headers)
        try:
            async with self._session.request(call.method, url, params=call.params or None,
                                             data=data, headers=headers) as resp:
                return RawAnswer(resp.status, {k.lower(): v for k, v in resp.headers.items()},
                                 await resp.read(), resp.reason or "")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _unavailable(self.base_url, self.timeout, exc) from exc

    async def _run(self, op: _Op[T]) -> T:
        answer: Any = None
        try:
            while True:
                step = op.send(answer)
                if isinstance(step, _Sleep):
                    await self._sleep(step.seconds)
                    answer = None
                else:
                    answer = await self._send(step)
        except StopIteration as stop:
            return stop.value

    async def introspect(self, uuid: str, manage_boot: bool | None = None,
                         known: Mapping[str, Any] | None = None) -> None:
        """`known` (ironsight's own): what the caller knows of the node, sent with the start
        so that discoverd need not read it back: `{"node": {"provision_state",
        "maintenance", "driver_info" (BMC address fields only)}, "ports": [{"address"}]}`."""
        await self._run(_introspect(uuid, manage_boot, known))

    async def get_status(self, uuid: str) -> Status:
        return await self._run(_get(_node_path(uuid)))

    async def get_statuses(self, uuids: Iterable[str]) -> dict[str, Status]:
        return await self._run(_statuses(uuids))

    async def abort(self, uuid: str, reason: str | None = None) -> None:
        """`reason`: "timeout" when the caller gave up waiting (ironsight's own; the
        attempt's failure code then names where it stalled)."""
        path = _node_path(uuid, "abort")
        await self._run(_post(path) if reason is None else _post_query(path, {"reason": reason}))

    async def get_attempts(self, uuid: str) -> list[dict[str, Any]]:
        """The node's kept inspection attempts with their timelines (ironsight's own)."""
        answer = await self._run(_get(_node_path(uuid, "attempts")))
        return list((answer or {}).get("attempts", []))

    async def add_phases(self, steps: Mapping[str, Iterable[Mapping[str, Any]]]) -> list[str]:
        """Steps of inspection attempts the caller took (its power actions, its virtual
        media), by node UUID, each `{"phase", "at" (ISO 8601), "details"}`, for the nodes'
        timelines, in one request (ironsight's own); the nodes whose steps were written."""
        body = {"nodes": [{"uuid": uuid, "phases": [dict(s) for s in found]}
                          for uuid, found in steps.items()]}
        answer = await self._run(_post_body_for("phases", body))
        return list((answer or {}).get("recorded", []))

    async def get_logs(self, uuid: str, attempt: int | None = None) -> dict[str, Any]:
        """The ramdisk's log of an attempt, as its beats sent it (ironsight's own)."""
        params = {"attempt": str(attempt)} if attempt is not None else {}
        answer = await self._run(_get_query(_node_path(uuid, "logs"), params))
        return answer if isinstance(answer, dict) else {}

    async def boot_params(self, uuid: str) -> dict[str, Any]:
        """The kernel parameters of a ramdisk that the caller boots itself without discoverd's
        PXE side (virtual media): the callback URL and a new callback token, which replaces
        the previous one. The answer holds a secret: never log it."""
        answer = await self._run(_post_for(_node_path(uuid, "boot_params")))
        return answer if isinstance(answer, dict) else {}

    async def list_statuses(self, marker: str | None = None, limit: int | None = None,
                            state: str | Iterable[str] | None = None) -> list[Status]:
        return await self._run(_list(marker, limit, state))

    async def get_data(self, uuid: str, raw: bool = False) -> Any:
        path = _node_path(uuid, "data", "unprocessed") if raw else _node_path(uuid, "data")
        return await self._run(_get(path))

    async def get_history(self, uuid: str) -> list[dict[str, Any]]:
        return await self._run(_history(uuid))

    async def get_history_data(self, uuid: str, run: int, raw: bool = False) -> Any:
        return await self._run(_get(_history_path(uuid, run, raw)))

    async def reapply(self, uuid: str, data: Mapping[str, Any] | None = None) -> None:
        await self._run(_reapply(uuid, data))

    async def continue_inspection(self, data: Mapping[str, Any],
                                  token: str | None = None) -> Any:
        """Hand a ramdisk's report to discoverd (the bare-metal API forwards newer ramdisks'
        `/v1/continue_inspection` this way), with the ramdisk's callback token if any."""
        return await self._run(_continue(data, token))

    async def wait_for_finish(self, uuids: Iterable[str], retry_interval: float = 1,
                              max_retries: int = DEFAULT_MAX_RETRIES) -> dict[str, Status]:
        return await self._run(_wait(uuids, retry_interval, max_retries))


# --- module-level functions (the design's API): one short-lived connection per call ---------


def _once(base_url: str | None, auth_token: str | None, timeout: float,
          transport: httpx.BaseTransport | None, op: Callable[[Client], T],
          sleep_function: Callable[[float], None] = time.sleep) -> T:
    """`op` on a client of its own (identifiers are checked before any request is sent)."""
    with Client(base_url, auth_token, timeout=timeout, transport=transport,
                sleep_function=sleep_function) as client:
        return op(client)


def introspect(uuid: str, base_url: str | None = None, auth_token: str | None = None,
               manage_boot: bool | None = None, *, timeout: float = DEFAULT_TIMEOUT,
               transport: httpx.BaseTransport | None = None) -> None:
    """Start introspection of a node (UUID or name); None leaves `manage_boot` to discoverd."""
    _once(base_url, auth_token, timeout, transport, lambda c: c.introspect(uuid, manage_boot))


def get_status(uuid: str, base_url: str | None = None, auth_token: str | None = None, *,
               timeout: float = DEFAULT_TIMEOUT,
               transport: httpx.BaseTransport | None = None) -> Status:
    """`{uuid, finished, state, error, started_at, finished_at, links}` of one node."""
    return _once(base_url, auth_token, timeout, transport, lambda c: c.get_status(uuid))


def get_statuses(uuids: Iterable[str], base_url: str | None = None,
                 auth_token: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 transport: httpx.BaseTransport | None = None) -> dict[str, Status]:
    """Statuses by UUID in few requests; UUIDs discoverd does not know are left out."""
    return _once(base_url, auth_token, timeout, transport, lambda c: c.get_statuses(uuids))


def abort(uuid: str, base_url: str | None = None, auth_token: str | None = None, *,
          timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None
          ) -> None:
    """Ask discoverd to abort; it answers 202 even if the node turns out not abortable."""
    _once(base_url, auth_token, timeout, transport, lambda c: c.abort(uuid))


def list_statuses(marker: str | None = None, limit: int | None = None,
                  state: str | Iterable[str] | None = None, base_url: str | None = None,
                  auth_token: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                  transport: httpx.BaseTransport | None = None) -> list[Status]:
    """Newest first; with `limit` None, every page (following `next`)."""
    return _once(base_url, auth_token, timeout, transport,
                 lambda c: c.list_statuses(marker, limit, state))


def get_data(uuid: str, raw: bool = False, base_url: str | None = None,
             auth_token: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
             transport: httpx.BaseTransport | None = None) -> Any:
    """Processed introspection data, or with `raw` the ramdisk's data as received."""
    return _once(base_url, auth_token, timeout, transport, lambda c: c.get_data(uuid, raw))


def reapply(uuid: str, data: Mapping[str, Any] | None = None, base_url: str | None = None,
            auth_token: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
            transport: httpx.BaseTransport | None = None) -> None:
    """Process the stored raw data again, or `data` instead (which replaces it)."""
    _once(base_url, auth_token, timeout, transport, lambda c: c.reapply(uuid, data))


def wait_for_finish(uuids: Iterable[str], retry_interval: float = 1,
                    max_retries: int = DEFAULT_MAX_RETRIES, base_url: str | None = None,
                    auth_token: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                    transport: httpx.BaseTransport | None = None,
                    sleep_function: Callable[[float], None] = time.sleep
                    ) -> dict[str, Status]:
    """Final statuses of all nodes (check `error`); `WaitTimeoutError` after `max_retries` polls.

    Uses one connection for the whole wait.
    """
    return _once(base_url, auth_token, timeout, transport,
                 lambda c: c.wait_for_finish(uuids, retry_interval, max_retries), sleep_function)
