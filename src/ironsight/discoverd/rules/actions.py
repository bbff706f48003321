"""Rule actions: what each accepts, and what it does to a run's state.

Actions change only the run's in-memory copies (node JSON, ports, plugin data, traits, log
messages): the engine turns the node's and ports' changes into JSON patches at the end, and
discoverd's processing applies them through the bare-metal API. Later conditions and rules
therefore see earlier actions' changes, while nothing is written before the whole run
succeeded. Each action returns what it changed, for the trace.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ironsight.discoverd.rules import paths
from ironsight.discoverd.rules.model import ApiCall, LogEntry, Rule

#: Node fields a rule may change: those the bare-metal API lets a PATCH change
#: (baremetal/api/nodes.py `_PATCHABLE`; a unit test keeps both lists equal). Everything
#: else (uuid, provision_state, driver_internal_info...) is refused when the rule is created.
NODE_FIELDS = frozenset({
    "name", "driver", "driver_info", "properties", "extra", "instance_info", "instance_uuid",
    "instance_name", "chassis_uuid", "resource_class", "owner", "lessee", "description",
    "retired", "retired_reason", "protected", "protected_reason", "automated_clean",
    "conductor_group", "shard", "parent_node", "network_data", "disable_power_off",
    "maintenance", "maintenance_reason",
    *(f"{name}_interface" for name in (
        "boot", "deploy", "inspect", "management", "power", "bios", "console", "firmware",
        "network", "raid", "rescue", "storage", "vendor")),
})
#: Node fields that are objects (a removed one becomes {}, as through the API).
NODE_DICT_FIELDS = frozenset({"driver_info", "properties", "extra", "instance_info"})
#: Port fields a rule may change (baremetal/api/ports.py `_PATCHABLE` but `node_uuid`: a rule
#: does not move ports between nodes).
PORT_FIELDS = frozenset({"address", "pxe_enabled", "local_link_connection",
                         "physical_network", "extra", "portgroup_uuid"})
PORT_DICT_FIELDS = frozenset({"local_link_connection", "extra"})
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class ActionError(Exception):
    """An action that cannot be done (a missing port, a list expected, an API call that
    failed); as upstream, it ends the run with an error naming the rule."""


class RuleFailed(Exception):
    """The `fail` action: the run stops and the inspection fails with this message."""


@dataclass
class RunState:
    """The run's working copies, changed by actions. `plugin_data_version` grows with every
    change of the plugin data, so that masked views of it are rebuilt only when needed."""

    node: dict[str, Any]
    plugin_data: dict[str, Any]
    ports: list[dict[str, Any]]
    api_call: ApiCall | None = None
    inventory: dict[str, Any] = field(default_factory=dict)
    logs: list[LogEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    plugin_data_version: int = 0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


Changes = list[dict[str, Any]]
Run = Callable[[RunState, Rule, dict[str, Any]], Awaitable[Changes]]


@dataclass(frozen=True)
class ActionSpec:
    """An action: its required and optional arguments (with defaults) and what it does."""

    required: tuple[str, ...]
    run: Run
    optional: Mapping[str, Any] = field(default_factory=dict)


def node_field(path: Any) -> list[str]:
    """`path` split, checked to start with a node field a rule may change."""
    parts = paths.split(path)
    if parts[0] not in NODE_FIELDS:
        hint = " (use add-trait/remove-trait)" if parts[0] == "traits" else ""
        raise ActionError(f"node field {parts[0]!r} cannot be changed by a rule: the "
                          f"bare-metal API refuses to patch it{hint}")
    return parts


def port_field(path: Any) -> list[str]:
    """`path` split, checked to start with a port field a rule may change."""
    parts = paths.split(path)
    if parts[0] not in PORT_FIELDS:
        raise ActionError(f"port field {parts[0]!r} cannot be changed by a rule (allowed: "
                          f"{', '.join(sorted(PORT_FIELDS))})")
    return parts


def _checked(split: Callable[[Any], list[str]], path: Any) -> list[str]:
    try:
        return split(path)
    except paths.PathError as exc:
        raise ActionError(str(exc)) from None


def _set(doc: dict[str, Any], parts: list[str], value: Any, dict_fields: frozenset[str],
         prefix: str) -> Changes:
    if len(parts) > 1 and doc.get(parts[0]) is None and parts[0] in dict_fields:
        doc[parts[0]] = {}
    try:
        paths.set_value(doc, parts, value)
    except paths.PathError as exc:
        raise ActionError(str(exc)) from None
    return [{"op": "add", "path": prefix + paths.pointer(parts), "value": value}]


def _extend(doc: dict[str, Any], parts: list[str], value: Any, unique: Any,
            prefix: str) -> Changes:
    try:
        changed = paths.extend(doc, parts, value, unique=bool(unique))
    except paths.PathError as exc:
        raise ActionError(str(exc)) from None
    return [{"op": "add", "path": prefix + paths.pointer(parts) + "/-", "value": value}
            ] if changed else []


def _delete(state: RunState, doc: dict[str, Any], parts: list[str],
            dict_fields: frozenset[str], prefix: str) -> Changes:
    if len(parts) == 1:
        if parts[0] not in doc or doc[parts[0]] in (None, {}):
            return []
        doc[parts[0]] = {} if parts[0] in dict_fields else None
        return [{"op": "remove", "path": prefix + paths.pointer(parts)}]
    if not paths.delete(doc, parts):
        state.warnings.append(f"nothing to delete at {prefix}{paths.pointer(parts)}")
        return []
    return [{"op": "remove", "path": prefix + paths.pointer(parts)}]


# --- fail, log ---------------------------------------------------------------------------

async def _fail(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    raise RuleFailed(str(args["msg"]))


async def _log(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    level = str(args["level"]).lower()
    if level not in LOG_LEVELS:
        raise ActionError(f"invalid log level {level!r} (one of {', '.join(LOG_LEVELS)})")
    state.logs.append(LogEntry(rule.uuid, level, str(args["msg"])))
    return [{"op": "add", "path": "/logs/-", "value": str(args["msg"])}]


# --- node attributes ---------------------------------------------------------------------

async def _set_attribute(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    parts = _checked(node_field, args["path"])
    if len(parts) == 1 and parts[0] in NODE_DICT_FIELDS and not isinstance(args["value"], dict):
        raise ActionError(f"node field {parts[0]!r} is an object; cannot set it to "
                          f"{type(args['value']).__name__}")
    return _set(state.node, parts, args["value"], NODE_DICT_FIELDS, "/node")


async def _extend_attribute(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    parts = _checked(node_field, args["path"])
    if len(parts) > 1 and state.node.get(parts[0]) is None and parts[0] in NODE_DICT_FIELDS:
        state.node[parts[0]] = {}
    return _extend(state.node, parts, args["value"], args["unique"], "/node")


async def _del_attribute(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    parts = _checked(node_field, args["path"])
    return _delete(state, state.node, parts, NODE_DICT_FIELDS, "/node")


# --- capabilities and traits -------------------------------------------------------------

def parse_capabilities(text: Any) -> dict[str, str]:
    """The node's `properties.capabilities` string "k:v,k2:v2" as an ordered dict."""
    if isinstance(text, dict):
        return {str(k): str(v) for k, v in text.items()}
    result: dict[str, str] = {}
    for item in str(text or "").split(","):
        if item.strip():
            key, _, value = item.partition(":")
            result[key.strip()] = value.strip()
    return result


def format_capabilities(caps: Mapping[str, str]) -> str:
    return ",".join(f"{k}:{v}" for k, v in caps.items())


def _write_capabilities(state: RunState, caps: dict[str, str]) -> Changes:
    properties = state.node.get("properties")
    if not isinstance(properties, dict):
        properties = state.node["properties"] = {}
    text = format_capabilities(caps)
    properties["capabilities"] = text
    return [{"op": "add", "path": "/node/properties/capabilities", "value": text}]


async def _set_capability(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    caps = parse_capabilities((state.node.get("properties") or {}).get("capabilities"))
    name, value = str(args["name"]), str(args["value"])
    if caps.get(name) == value:
        return []
    caps[name] = value
    return _write_capabilities(state, caps)


async def _unset_capability(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    caps = parse_capabilities((state.node.get("properties") or {}).get("capabilities"))
    if caps.pop(str(args["name"]), None) is None:
        return []
    return _write_capabilities(state, caps)


def _traits(state: RunState) -> list[str]:
    traits = state.node.get("traits")
    if not isinstance(traits, list):
        traits = state.node["traits"] = []
    return traits


async def _add_trait(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    traits, name = _traits(state), str(args["name"])
    if name in traits:
        return []
    traits.append(name)
    return [{"op": "add", "path": "/traits/-", "value": name}]


async def _remove_trait(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    traits, name = _traits(state), str(args["name"])
    if name not in traits:
        state.warnings.append(f"trait {name!r} is not set; nothing to remove")
        return []
    traits.remove(name)
    return [{"op": "remove", "path": f"/traits/{name}"}]


# --- plugin data -------------------------------------------------------------------------

def _plugin_parts(path: Any) -> list[str]:
    try:
        return paths.split(path)
    except paths.PathError as exc:
        raise ActionError(str(exc)) from None


async def _set_plugin_data(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    changes = _set(state.plugin_data, _plugin_parts(args["path"]), args["value"],
                   frozenset(), "/plugin_data")
    state.plugin_data_version += 1
    return changes


async def _extend_plugin_data(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    changes = _extend(state.plugin_data, _plugin_parts(args["path"]), args["value"],
                      args["unique"], "/plugin_data")
    state.plugin_data_version += 1
    return changes


async def _unset_plugin_data(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    parts = _plugin_parts(args["path"])
    if not paths.delete(state.plugin_data, parts):
        state.warnings.append(f"nothing to delete at /plugin_data{paths.pointer(parts)}")
        return []
    state.plugin_data_version += 1
    return [{"op": "remove", "path": "/plugin_data" + paths.pointer(parts)}]


# --- ports -------------------------------------------------------------------------------

def find_port(state: RunState, port_id: Any) -> dict[str, Any]:
    """The node's port whose UUID or MAC address (any case) is `port_id`, or (an ironsight
    extension) whose MAC is that of the inventory interface named `port_id` (e.g. "eth0"),
    so that rules can go from LLDP data, keyed by interface name, to ports."""
    wanted = str(port_id).lower()
    for interface in state.inventory.get("interfaces") or []:
        if isinstance(interface, dict) and interface.get("name") == port_id:
            wanted = str(interface.get("mac_address", "")).lower()
    for port in state.ports:
        if str(port.get("uuid", "")).lower() == wanted or \
                str(port.get("address", "")).lower() == wanted:
            return port
    raise ActionError(f"the node has no port {port_id!r} (by UUID, MAC address or "
                      "inventory interface name)")


def _port_prefix(port: dict[str, Any]) -> str:
    return f"/ports/{port.get('uuid')}"


async def _set_port_attribute(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    port = find_port(state, args["port_id"])
    parts = _checked(port_field, args["path"])
    return _set(port, parts, args["value"], PORT_DICT_FIELDS, _port_prefix(port))


async def _extend_port_attribute(state: RunState, rule: Rule,
                                 args: dict[str, Any]) -> Changes:
    port = find_port(state, args["port_id"])
    parts = _checked(port_field, args["path"])
    if len(parts) > 1 and port.get(parts[0]) is None and parts[0] in PORT_DICT_FIELDS:
        port[parts[0]] = {}
    return _extend(port, parts, args["value"], args["unique"], _port_prefix(port))


async def _del_port_attribute(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    port = find_port(state, args["port_id"])
    parts = _checked(port_field, args["path"])
    return _delete(state, port, parts, PORT_DICT_FIELDS, _port_prefix(port))


# --- api-call ----------------------------------------------------------------------------

def shown_url(url: str) -> str:
    """`url` without credentials or query (they may hold secrets): for traces and errors."""
    parsed = urllib.parse.urlsplit(url)
    host = parsed.hostname or ""
    if parsed.port:
        host = f"{host}:{parsed.port}"
    return urllib.parse.urlunsplit((parsed.scheme, host, parsed.path, "", ""))


def check_api_call_args(args: Mapping[str, Any]) -> None:
    """The api-call arguments' types and ranges (at creation for literal values, and at run
    time after interpolation); ActionError naming the argument."""
    url = args.get("url")
    if isinstance(url, str) and "{" not in url and \
            urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise ActionError(f"url must be an http or https URL, not {url!r}")
    try:
        if float(args.get("timeout", 5)) <= 0:
            raise ActionError("timeout must be greater than zero")
        if int(args.get("retries", 3)) < 0:
            raise ActionError("retries cannot be negative")
        if float(args.get("backoff_factor", 0.3)) < 0:
            raise ActionError("backoff_factor cannot be negative")
    except (TypeError, ValueError) as exc:
        raise ActionError(f"timeout, retries and backoff_factor must be numbers: {exc}"
                          ) from None
    for name in ("headers", "proxies"):
        value = args.get(name)
        if value is not None and not (isinstance(value, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
            raise ActionError(f"{name} must be an object of strings")


async def _api_call(state: RunState, rule: Rule, args: dict[str, Any]) -> Changes:
    check_api_call_args(args)
    url = str(args["url"])
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise ActionError(f"api-call: {shown_url(url)!r} is not an http or https URL")
    shown = shown_url(url)
    if state.api_call is None:
        return [{"op": "api-call", "url": shown, "status": None,
                 "note": "not called (no transport: dry run)"}]
    timeout = float(args["timeout"])
    retries = int(args["retries"])
    backoff = float(args["backoff_factor"])
    headers = args["headers"] or {}
    proxies = args["proxies"] or {}
    problem = ""
    for attempt in range(retries + 1):
        if attempt:
            await state.sleep(backoff * 2 ** (attempt - 1))
        try:
            async with asyncio.timeout(timeout):
                response = await state.api_call(url, headers, proxies, timeout)
        except (OSError, TimeoutError) as exc:
            problem = f"{exc.__class__.__name__}: {exc}" if str(exc) else \
                exc.__class__.__name__
            continue
        if response.status in RETRY_STATUSES:
            problem = f"HTTP {response.status}"
            continue
        if response.status >= 400:
            raise ActionError(f"api-call: GET {shown} answered HTTP {response.status}")
        return [{"op": "api-call", "url": shown, "status": response.status}]
    raise ActionError(f"api-call: GET {shown} failed after {retries + 1} attempt(s): {problem}")


ACTIONS: dict[str, ActionSpec] = {
    "fail": ActionSpec(("msg",), _fail),
    "log": ActionSpec(("msg",), _log, {"level": "info"}),
    "set-attribute": ActionSpec(("path", "value"), _set_attribute),
    "extend-attribute": ActionSpec(("path", "value"), _extend_attribute, {"unique": False}),
    "del-attribute": ActionSpec(("path",), _del_attribute),
    "set-capability": ActionSpec(("name", "value"), _set_capability),
    "unset-capability": ActionSpec(("name",), _unset_capability),
    "add-trait": ActionSpec(("name",), _add_trait),
    "remove-trait": ActionSpec(("name",), _remove_trait),
    "set-plugin-data": ActionSpec(("path", "value"), _set_plugin_data),
    "extend-plugin-data": ActionSpec(("path", "value"), _extend_plugin_data,
                                     {"unique": False}),
    "unset-plugin-data": ActionSpec(("path",), _unset_plugin_data),
    "set-port-attribute": ActionSpec(("port_id", "path", "value"), _set_port_attribute),
    "extend-port-attribute": ActionSpec(("port_id", "path", "value"), _extend_port_attribute,
                                        {"unique": False}),
    "del-port-attribute": ActionSpec(("port_id", "path"), _del_port_attribute),
    "api-call": ActionSpec(("url",), _api_call, {
        "headers": None, "proxies": None, "timeout": 5, "retries": 3, "backoff_factor": 0.3}),
}
