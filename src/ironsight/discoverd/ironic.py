"""discoverd's client of the bare-metal API (Ironic v1): the only way it touches nodes.

aiohttp rather than httpx here: this is discoverd's hot path (about ten calls per
introspection) and aiohttp costs ~0.3 ms of CPU per call against httpx's ~1.4 ms (measured,
bench/RESULTS.md). Calls that hit a locked node (409) or a full conductor (503) are retried
a bounded number of times, backing off: the bare-metal conductor holds node locks briefly
during its own actions, and refuses work rather than queueing it without end.

When `ironsight serve` runs both services in one process and `ironic_url` names its own
bare-metal listener, the calls go to the bare-metal application in-process instead
(`local`, an `AsgiCall` given by cli/server.py): the same requests, headers included, through
the same application and middleware, with the same answers and retries; no socket, no
HTTP client, no HTTP server (bench/RESULTS.md, issue 31 item 7).
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
from collections.abc import Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import quote, urlencode, urlsplit

import aiohttp
from aiohttp.http import SERVER_SOFTWARE

from ironsight.common.api.errors import error_message
from ironsight.common.api.pagination import next_query
from ironsight.common.asgi_call import AsgiCall, IncompleteAnswer
from ironsight.common.auth.credentials import Credentials
from ironsight.common.auth.service_token import TokenUnavailable, service_token
from ironsight.common.config import Config
from ironsight.common.exceptions import IronsightError

LOG = logging.getLogger(__name__)
API_VERSION = "1.115"
# Answers worth asking again: a busy conductor (503), and a load balancer in front of the
# replicas whose chosen one just died or restarts (502, 504).
RETRIED = (502, 503, 504)
# What yarl (aiohttp's URLs) leaves as it is in a path and in a query value
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = "/?:@!$'()*,;-._~"


class IronicError(IronsightError):
    """The bare-metal API refused or failed; `code` is its HTTP status (502 if unreachable)."""


class BareMetal(Protocol):
    """What discoverd needs of the bare-metal service: the seam unit tests stand in for.
    Every method raises IronicError when the API refuses or cannot be reached."""

    async def get_node(self, ident: str, fields: str | None = None) -> dict[str, Any]: ...
    async def get_power(self, uuid: str) -> dict[str, Any]: ...
    async def validate_power(self, uuid: str) -> tuple[bool, str | None]: ...
    async def list_ports(self, uuid: str) -> list[dict[str, Any]]: ...
    async def node_with_ports(self, uuid: str, fields: str | None = None
                              ) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...
    async def list_nodes_detail(self) -> list[dict[str, Any]]: ...
    async def node_stamps(self, since: str | None = None) -> dict[str, Any]: ...
    async def list_all_port_macs(self, except_states: Sequence[str] = ()) -> set[str]: ...
    async def set_boot_device_pxe(self, uuid: str) -> None: ...
    async def set_power(self, uuid: str, target: str) -> None: ...
    async def patch_node(self, uuid: str, patch: list[dict[str, Any]]) -> None: ...
    async def create_port(self, uuid: str, mac: str, pxe_enabled: bool,
                          fields: Mapping[str, Any] | None = None) -> dict[str, Any]: ...
    async def patch_port(self, port_uuid: str, patch: list[dict[str, Any]]) -> None: ...
    async def delete_port(self, port_uuid: str) -> None: ...
    async def add_trait(self, uuid: str, trait: str) -> None: ...
    async def remove_trait(self, uuid: str, trait: str) -> None: ...
    async def apply_changes(self, uuid: str, patch: list[dict[str, Any]], *,
                            add_traits: Sequence[str] = (), remove_traits: Sequence[str] = (),
                            event: str | None = None,
                            port_patches: Mapping[str, list[dict[str, Any]]] | None = None
                            ) -> None: ...
    async def add_history(self, uuid: str, event: str, severity: str = "INFO") -> None: ...
    async def discovery_lookup(self, macs: Sequence[str],
                               bmc_addresses: Sequence[str]) -> list[dict[str, Any]]: ...
    async def create_discovered(self, body: dict[str, Any]) -> dict[str, Any]: ...


def _message(status: int, body: bytes) -> str:
    return error_message(body, f"HTTP {status}")


def _locked(status: int, body: bytes) -> bool:
    """A 409 worth retrying: the node is locked (not a duplicate name or MAC). `call` also
    retries 503 (the conductor's workers are all busy)."""
    return "locked" in _message(status, body).lower()


class Ironic:
    def __init__(self, conf: Config, local: AsgiCall | None = None) -> None:
        """`local`: the bare-metal application of this very process, which `ironic_url`
        names; its calls then skip HTTP (the caller decides: cli/server.py)."""
        section = conf.introspection
        self.base = section.ironic_url.rstrip("/")
        self.headers = {"X-OpenStack-Ironic-API-Version": API_VERSION,
                        "Content-Type": "application/json"}
        self.credentials = Credentials(section.ironic_username, section.ironic_password,
                                       section.ironic_auth_token, section.ironic_cafile)
        self.headers.update(self.credentials.headers())
        # auth_strategy = keystone: the service user's token, asked for on every call
        self.tokens = service_token(conf)
        self.attempts = section.ironic_retries
        self.interval = section.ironic_retry_interval
        self.unreachable_for = section.ironic_unreachable_timeout
        self.timeout = aiohttp.ClientTimeout(total=section.ironic_timeout)
        self._session: aiohttp.ClientSession | None = None
        # whether the API has node snapshots (and takes port patches with a node's
        # changes): unknown until asked
        self.snapshots: bool | None = None
        self.local = local
        if local is not None:
            url = urlsplit(self.base)
            self._prefix = url.path  # of a base URL with a path: kept, as over HTTP
            # what aiohttp sends with every request, in its order (Content-Length: AsgiCall)
            self._local_headers = [("Host", url.netloc), *self.headers.items(),
                                   ("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate"),
                                   ("User-Agent", SERVER_SOFTWARE)]

    def _http(self) -> aiohttp.ClientSession:
        # Created lazily: a session belongs to the running event loop.
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self.headers, timeout=self.timeout,
                connector=aiohttp.TCPConnector(limit=64, keepalive_timeout=30,
                                               ssl=self._ssl()))
        return self._session

    def _ssl(self) -> ssl.SSLContext | bool:
        return self.credentials.ssl_context() if self.base.startswith("https:") else True

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def call(self, method: str, path: str, body: Any = None,
                   params: dict[str, str] | None = None) -> Any:
        """One API call. Retried with backoff: a locked node (409), a busy conductor or a load
        balancer without a live replica (502, 503, 504) `ironic_retries` times; an API that
        cannot be reached (a restart) for up to `ironic_unreachable_timeout` seconds."""
        data = None if body is None else json.dumps(body)
        url = self.base + path
        loop = asyncio.get_running_loop()
        unreachable_until: float | None = None
        attempt = 0
        renewed = False
        while True:
            attempt += 1
            try:
                headers = await self.tokens.headers() if self.tokens is not None else None
                if self.local is not None:
                    status, payload = await self._in_process(method, path, data, params,
                                                             headers)
                else:
                    async with self._http().request(method, url, data=data, params=params,
                                                    headers=headers) as resp:
                        status, payload = resp.status, await resp.read()
            except (aiohttp.ClientError, TimeoutError, TokenUnavailable,
                    IncompleteAnswer) as exc:
                # Keystone down (no token) is waited out as the API's own restart would be
                why = f"{exc or type(exc).__name__}"
                now = loop.time()
                unreachable_until = unreachable_until or now + self.unreachable_for
                if now >= unreachable_until:
                    what = "no token" if isinstance(exc, TokenUnavailable) else "unreachable"
                    raise IronicError(f"bare-metal API {what} ({method} {path}): {why}",
                                      code=502) from None
                LOG.info("%s %s: bare-metal API unreachable (%s); retrying", method, path, why)
                await asyncio.sleep(min(self._backoff(attempt), unreachable_until - now))
                continue
            unreachable_until = None
            if status == 401 and self.tokens is not None and not renewed:
                self.tokens.invalidate()  # revoked, or expired early: once with a new one
                renewed = True
                continue
            if attempt < self.attempts and (status in RETRIED or (status == 409
                                                                  and _locked(status, payload))):
                LOG.debug("%s %s: %s, retry %d/%d", method, path,
                          "node locked" if status == 409 else f"HTTP {status}", attempt,
                          self.attempts)
                await asyncio.sleep(self._backoff(attempt))
                continue
            if status >= 400:
                raise IronicError(_message(status, payload), code=status)
            return json.loads(payload) if payload else None

    async def _in_process(self, method: str, path: str, data: str | None,
                          params: dict[str, str] | None, headers: Mapping[str, str] | None
                          ) -> tuple[int, bytes]:
        """The request aiohttp would send (path and query encoded alike, the session's and
        the call's headers, the body), answered by the bare-metal application itself."""
        assert self.local is not None
        sent = self._local_headers
        if headers:  # a Keystone token: replaces a configured one, as aiohttp's merge does
            names = {name.lower() for name in headers}
            sent = [*((k, v) for k, v in sent if k.lower() not in names), *headers.items()]
        answer = await self.local.request(
            method, quote(self._prefix + path, safe=_PATH_SAFE),
            query=urlencode(params, safe=_QUERY_SAFE) if params else "", headers=sent,
            body=None if data is None else data.encode(), timeout=self.timeout.total)
        return answer.status, answer.body

    def _backoff(self, attempt: int) -> float:
        """Doubling up to 2 s: short waits for short locks, patience for long ones."""
        return float(min(self.interval * 2 ** (attempt - 1), max(self.interval, 2.0)))

    # --- the calls discoverd makes -----------------------------------------------------------

    async def get_node(self, ident: str, fields: str | None = None) -> dict[str, Any]:
        """The node, or only `fields` of it (cheaper on both sides on the hot path)."""
        if ident in (".", "..") or not ident:
            raise IronicError(f"Node {ident} could not be found.", code=404)
        params = {"fields": fields} if fields else None
        node = await self.call("GET", f"/v1/nodes/{quote(ident, safe='')}", params=params)
        if not isinstance(node, dict) or "uuid" not in node:
            raise IronicError(f"Node {ident} could not be found.", code=404)
        return node

    async def get_power(self, uuid: str) -> dict[str, Any]:
        """Only the fields a power-state wait needs (a fraction of a full node document)."""
        return dict(await self.call("GET", f"/v1/nodes/{uuid}", params={
            "fields": "uuid,power_state,target_power_state,last_error"}))

    async def validate_power(self, uuid: str) -> tuple[bool, str | None]:
        result = await self.call("GET", f"/v1/nodes/{uuid}/validate")
        power = result.get("power") or {}
        return bool(power.get("result")), power.get("reason")

    async def list_ports(self, uuid: str) -> list[dict[str, Any]]:
        body = await self.call("GET", "/v1/ports/detail", params={"node": uuid,
                                                                  "limit": "1000"})
        return list(body["ports"])

    async def list_nodes_detail(self) -> list[dict[str, Any]]:
        """Every node with every field, page by page (the fleet index's first build)."""
        return await self._pages("/v1/nodes/detail", "nodes", {})

    async def node_stamps(self, since: str | None = None) -> dict[str, Any]:
        """Every node's UUID and when it last changed, or those changed since `since`; how
        many nodes there are; the bare-metal clock when it read them (ironsight only)."""
        return dict(await self.call("GET", "/v1/fleet/stamps",
                                    params={"since": since} if since else None))

    async def list_all_port_macs(self, except_states: Sequence[str] = ()) -> set[str]:
        """Every port's MAC (the PXE filter's full sync), page by page, but those of nodes
        in `except_states`. Only the query of `next` is followed: its host is the API's
        public endpoint, which discoverd may not reach."""
        skipped: set[str] = set()
        for state in except_states:
            for node in await self._pages("/v1/nodes", "nodes", {
                    "fields": "uuid", "provision_state": state}):
                skipped.add(str(node["uuid"]))
        fields = "address,node_uuid" if skipped else "address"
        return {str(p["address"]).lower()
                for p in await self._pages("/v1/ports", "ports", {"fields": fields})
                if p.get("address") and p.get("node_uuid") not in skipped}

    async def _pages(self, path: str, key: str, query: dict[str, str]
                     ) -> list[dict[str, Any]]:
        base = {**query, "limit": "1000"}
        params: dict[str, str] | None = base
        found: list[dict[str, Any]] = []
        seen: set[str] = set()
        while params is not None:
            body = await self.call("GET", path, params=params)
            items = body.get(key) or []
            found.extend(items)
            params = next_query(body.get("next"), base, seen) if items else None
        return found

    async def set_boot_device_pxe(self, uuid: str) -> None:
        await self.call("PUT", f"/v1/nodes/{uuid}/management/boot_device",
                        {"boot_device": "pxe", "persistent": False})

    async def set_power(self, uuid: str, target: str) -> None:
        await self.call("PUT", f"/v1/nodes/{uuid}/states/power", {"target": target})

    async def patch_node(self, uuid: str, patch: list[dict[str, Any]]) -> None:
        if patch:
            await self.call("PATCH", f"/v1/nodes/{uuid}", patch)

    async def create_port(self, uuid: str, mac: str, pxe_enabled: bool,
                          fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`fields`: more of the port's fields (local_link_connection, physical_network)."""
        return dict(await self.call("POST", "/v1/ports", {
            **(fields or {}), "node_uuid": uuid, "address": mac, "pxe_enabled": pxe_enabled}))

    async def patch_port(self, port_uuid: str, patch: list[dict[str, Any]]) -> None:
        await self.call("PATCH", f"/v1/ports/{port_uuid}", patch)

    async def delete_port(self, port_uuid: str) -> None:
        """Gone already is done (a retry after a lost answer finds it gone)."""
        try:
            await self.call("DELETE", f"/v1/ports/{port_uuid}")
        except IronicError as exc:
            if exc.code != 404:
                raise

    async def add_trait(self, uuid: str, trait: str) -> None:
        """One trait, leaving the node's others alone (`PUT .../traits/{trait}`)."""
        await self.call("PUT", f"/v1/nodes/{uuid}/traits/{quote(trait, safe='')}")

    async def remove_trait(self, uuid: str, trait: str) -> None:
        """Not there (any more) is done: a rule removing a trait the node lacks, or a retry."""
        try:
            await self.call("DELETE", f"/v1/nodes/{uuid}/traits/{quote(trait, safe='')}")
        except IronicError as exc:
            if exc.code != 404:
                raise

    async def node_with_ports(self, uuid: str, fields: str | None = None
                              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The node (or only `fields` of it) and its ports, read together in one request
        through the bare-metal API's ironsight-only `GET /v1/nodes/{uuid}/snapshot`. An API
        without it (an older replica, during a rolling upgrade) gets two calls."""
        if self.snapshots is not False:
            params = {"fields": fields} if fields else None
            try:
                body = await self.call("GET", f"/v1/nodes/{quote(uuid, safe='')}/snapshot",
                                       params=params)
            except IronicError as exc:
                if exc.code not in (404, 405):
                    raise
            else:
                self.snapshots = True
                return dict(body["node"]), list(body["ports"])
        node = await self.get_node(uuid, fields)  # the node's own 404, when it is missing
        if self.snapshots is None:
            self.snapshots = False
        return node, await self.list_ports(uuid)

    async def apply_changes(self, uuid: str, patch: list[dict[str, Any]], *,
                            add_traits: Sequence[str] = (), remove_traits: Sequence[str] = (),
                            event: str | None = None,
                            port_patches: Mapping[str, list[dict[str, Any]]] | None = None
                            ) -> None:
        """A node patch, trait changes, a history event (an inspection's outcome) and
        patches of its ports in one request and one transaction, through the bare-metal
        API's ironsight-only `POST /v1/nodes/{uuid}/changes`. A port patch that moves the
        port (node or portgroup), or any when the API is not known to take them there (its
        node snapshot was not seen), is a PATCH of its own first. An API without the call
        (a replica of an older release, during a rolling upgrade) gets them one call
        each."""
        ports: list[tuple[str, list[dict[str, Any]]]] = []
        for port_uuid, ops in (port_patches or {}).items():
            if self.snapshots and not {str(op.get("path", "")).strip("/").split("/")[0]
                                       for op in ops} & {"node_uuid", "portgroup_uuid"}:
                ports.append((port_uuid, ops))
            elif ops:
                await self.patch_port(port_uuid, ops)
        if not add_traits and not remove_traits and event is None and not ports:
            await self.patch_node(uuid, patch)
            return
        body = {"patch": patch, "add_traits": list(add_traits),
                "remove_traits": list(remove_traits),
                "events": [{"event": event, "event_type": "inspection"}] if event else [],
                **({"ports": [{"uuid": u, "patch": ops} for u, ops in ports]} if ports else {})}
        try:
            await self.call("POST", f"/v1/nodes/{quote(uuid, safe='')}/changes", body)
            return
        except IronicError as exc:
            if exc.code not in (404, 405):
                raise
        for port_uuid, ops in ports:
            await self.patch_port(port_uuid, ops)
        await self.patch_node(uuid, patch)
        for trait in add_traits:
            await self.add_trait(uuid, trait)
        for trait in remove_traits:
            await self.remove_trait(uuid, trait)
        if event is not None:
            try:
                await self._post_history(uuid, {"event": event, "severity": "INFO",
                                                "event_type": "inspection"})
            except IronicError as exc:  # the changes are made: a lost event is only logged
                LOG.warning("Node %s: the history event was not recorded: %s", uuid, exc)

    async def add_history(self, uuid: str, event: str, severity: str = "INFO") -> None:
        """An event in the node's history (`GET /v1/nodes/{uuid}/history`): a change of
        nothing but events (`POST .../changes`, which discoverd's `member` user may make);
        an older bare-metal API's `POST .../history` (admin) where it has no such call."""
        record = {"event": event, "severity": severity, "event_type": "inspection"}
        try:
            await self.call("POST", f"/v1/nodes/{quote(uuid, safe='')}/changes",
                            {"events": [record]})
            return
        except IronicError as exc:
            if exc.code not in (404, 405):
                raise
        await self._post_history(uuid, record)

    async def _post_history(self, uuid: str, record: dict[str, str]) -> None:
        await self.call("POST", f"/v1/nodes/{quote(uuid, safe='')}/history", record)

    # --- discovery (the bare-metal API's ironsight-only /v1/discovery) --------------------

    async def discovery_lookup(self, macs: Sequence[str],
                               bmc_addresses: Sequence[str]) -> list[dict[str, Any]]:
        """Every node (any state) with a port of `macs` or a BMC at `bmc_addresses`."""
        body = await self.call("POST", "/v1/discovery/lookup",
                               {"macs": list(macs), "bmc_addresses": list(bmc_addresses)})
        return list(body["matches"])

    async def create_discovered(self, body: dict[str, Any]) -> dict[str, Any]:
        """`{"node": {...}, "matches": []}`, or `{"node": None, "matches": [...]}` when known
        nodes match after all (nothing created); 429 (IronicError) beyond the pending cap."""
        return dict(await self.call("POST", "/v1/discovery/nodes", body))
