"""Request bodies, validated at the boundary; every error names its field."""

from __future__ import annotations

import copy
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from ironsight.baremetal import fields
from ironsight.common.exceptions import Invalid
from ironsight.common.ids import is_uuid_like

_NAME_RE = re.compile(r"^[A-Za-z0-9\-._~]+$")
_MAC_RE = re.compile(r"^([0-9a-fA-F]{2})([:-][0-9a-fA-F]{2}){5}$")

JsonDict = dict[str, Any]
# A boolean in a request body, in any spelling Ironic's API takes ("True", "on", "0"...).
IronicBool = Annotated[bool, BeforeValidator(fields.ironic_bool)]


def normalize_mac(value: str) -> str:
    if not isinstance(value, str) or not _MAC_RE.match(value.strip()):
        raise ValueError(f"Expected a MAC address but received {value}.")
    return value.strip().lower().replace("-", ":")


def _check_name(value: str | None) -> str | None:
    if value is None:
        return None
    if not _NAME_RE.match(value) or len(value) > 255:
        raise ValueError(f"Expected a logical name but received {value}: use letters, digits "
                         "and -._~ only (at most 255)")
    if is_uuid_like(value):
        raise ValueError(f"Expected a logical name but received {value}: a UUID is not a name")
    return value


def _check_uuid(_cls: Any, value: str | None, info: ValidationInfo) -> str | None:
    """A UUID field (a validator), refused in Ironic's words (its args.uuid), which clients
    match."""
    if value is not None and not is_uuid_like(value):
        raise ValueError(f"Expected UUID for {info.field_name}: {value}")
    return value.lower() if value else value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


_GROUP_RE = re.compile(r"^[A-Za-z0-9_\-.:]*$")
Text255 = Annotated[str, Field(max_length=255)]


class NodeFields(_Strict):
    """Fields an operator may set on a node, at creation or through PATCH (the microversion
    each needs: views.FIELD_VERSIONS)."""

    name: str | None = Field(default=None)
    driver: str = Field(min_length=1, max_length=255)
    driver_info: JsonDict = Field(default_factory=dict)
    properties: JsonDict = Field(default_factory=dict)
    extra: JsonDict = Field(default_factory=dict)
    instance_info: JsonDict = Field(default_factory=dict)
    instance_uuid: str | None = None
    instance_name: str | None = Field(default=None, min_length=1, max_length=255)
    chassis_uuid: str | None = None
    resource_class: str | None = Field(default=None, max_length=80)
    owner: Text255 | None = None
    lessee: Text255 | None = None
    description: str | None = Field(default=None, max_length=4096)
    retired: IronicBool = False
    retired_reason: str | None = None
    automated_clean: IronicBool | None = None
    conductor_group: str = Field(default="", max_length=255)
    shard: Text255 | None = None
    parent_node: str | None = Field(default=None, max_length=36)
    network_data: JsonDict | None = None
    disable_power_off: IronicBool = False
    boot_interface: str | None = None
    deploy_interface: str | None = None
    inspect_interface: str | None = None
    management_interface: str | None = None
    power_interface: str | None = None
    bios_interface: str | None = None
    console_interface: str | None = None
    firmware_interface: str | None = None
    network_interface: str | None = None
    raid_interface: str | None = None
    rescue_interface: str | None = None
    storage_interface: str | None = None
    vendor_interface: str | None = None

    _name = field_validator("name")(classmethod(lambda cls, v: _check_name(v)))
    _iuuid = field_validator("instance_uuid")(classmethod(_check_uuid))
    _cuuid = field_validator("chassis_uuid")(classmethod(_check_uuid))

    @field_validator("conductor_group", mode="before")
    @classmethod
    def _group(cls, v: Any) -> Any:
        """Ironic's rule: letters, digits and _-.: only, stored lower case; None is ''."""
        if v is None:
            return ""
        if isinstance(v, str):
            if not _GROUP_RE.match(v):
                raise ValueError(f"Invalid conductor_group {v!r}: use letters, digits and "
                                 "_-.: only")
            return v.lower()
        return v

    @field_validator("properties")
    @classmethod
    def _properties(cls, v: JsonDict) -> JsonDict:
        fields.check_properties(v)  # raises Invalid naming 'properties field ...'
        return v

    @field_validator("driver_info")
    @classmethod
    def _driver_info(cls, v: JsonDict) -> JsonDict:
        fields.check_driver_info(v)
        return v


class NodePatched(NodeFields):
    """A node's fields after a JSON patch: also those only PATCH may set."""

    protected: IronicBool = False
    protected_reason: str | None = None
    maintenance: IronicBool = False
    maintenance_reason: str | None = None


class NodeCreate(NodeFields):
    uuid: str | None = None

    _uuid = field_validator("uuid")(classmethod(_check_uuid))


class PortFields(_Strict):
    address: str
    node_uuid: str
    pxe_enabled: IronicBool = True
    local_link_connection: JsonDict = Field(default_factory=dict)
    physical_network: str | None = Field(default=None, max_length=64)
    extra: JsonDict = Field(default_factory=dict)

    @field_validator("address")
    @classmethod
    def _mac(cls, v: str) -> str:
        return normalize_mac(v)

    @field_validator("node_uuid")
    @classmethod
    def _node(cls, v: str) -> str:
        if not is_uuid_like(v):
            raise ValueError(f"Expected UUID for node_uuid: {v}")
        return v.lower()

    @field_validator("local_link_connection")
    @classmethod
    def _llc(cls, v: JsonDict) -> JsonDict:
        allowed = {"switch_id", "port_id", "switch_info", "hostname", "network_type"}
        bad = sorted(set(v) - allowed)
        if bad:
            raise ValueError(f"unknown key(s) {', '.join(bad)} "
                             f"(allowed: {', '.join(sorted(allowed))})")
        return v


class PortCreate(PortFields):
    uuid: str | None = None

    _uuid = field_validator("uuid")(classmethod(_check_uuid))


class PowerTarget(_Strict):
    target: str
    timeout: int | None = Field(default=None, ge=1)


class ProvisionTarget(_Strict):
    target: str
    configdrive: str | JsonDict | None = None
    clean_steps: list[JsonDict] | None = None
    service_steps: list[JsonDict] | None = None
    deploy_steps: list[JsonDict] | None = None
    rescue_password: str | None = Field(default=None, repr=False)
    runbook: str | None = None
    disable_ramdisk: IronicBool | None = None


class BootDevice(_Strict):
    boot_device: str
    persistent: IronicBool = False


class Maintenance(_Strict):
    reason: str | None = None


MAX_EVENT = 16384


class HistoryEvent(_Strict):
    """An event another service records in a node's history (ironsight only)."""

    event: str = Field(min_length=1, max_length=MAX_EVENT)
    severity: Literal["INFO", "WARNING", "ERROR"] = "INFO"
    event_type: str = Field(default="inspection", min_length=1, max_length=32)

    @field_validator("event")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a non-empty string")
        return value


class PortChanges(_Strict):
    """A JSON patch of one of the node's ports, by UUID."""

    uuid: str
    patch: list[Any] = Field(max_length=100)


class NodeChanges(_Strict):
    """`POST /v1/nodes/{node}/changes` (ironsight only): a JSON patch of the node, traits
    to add and remove, history events and patches of its ports, applied together."""

    patch: list[Any] = Field(default_factory=list, max_length=1000)
    add_traits: list[str] = Field(default_factory=list, max_length=50)
    remove_traits: list[str] = Field(default_factory=list, max_length=50)
    events: list[HistoryEvent] = Field(default_factory=list, max_length=10)
    ports: list[PortChanges] = Field(default_factory=list, max_length=1000)


# --- JSON patch (RFC 6902: add, replace, remove) --------------------------------------------


def _split(path: Any) -> list[str]:
    if not isinstance(path, str) or not path.startswith("/") or path == "/":
        raise Invalid(f"Invalid patch path {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _patch_error(op: dict[str, Any], reason: str) -> Invalid:
    """Ironic's PatchError, with jsonpatch's reason: clients match the words ("Reason: can't
    remove a non-existent object"). The operation is shown without its value, which may be a
    secret (Ironic shows it whole)."""
    shown = {k: op[k] for k in ("op", "path") if k in op}
    return Invalid(f"Couldn't apply patch '{shown}'. Reason: {reason}")


def _index(items: list[Any], part: str, op: JsonDict, upto: int) -> int:
    """An array index of a patch path: digits, at most `upto`."""
    if not part.isdigit() or (len(part) > 1 and part.startswith("0")):
        raise _patch_error(op, f"'{part}' is not a valid index of a list")
    index = int(part)
    if index > upto:
        raise _patch_error(op, f"can't {op.get('op')} outside of list")
    return index


def _child(parent: Any, part: str, op: JsonDict, kind: str) -> Any:
    if isinstance(parent, list):
        return parent[_index(parent, part, op, len(parent) - 1)]
    if not isinstance(parent, dict) or part not in parent:
        raise Invalid(f"Can't {kind} '{op['path']}': '{part}' does not exist")
    return parent[part]


def _patch_list(items: list[Any], part: str, op: JsonDict, kind: str) -> None:
    if kind == "add":
        items.insert(len(items) if part == "-" else _index(items, part, op, len(items)),
                     op["value"])
    elif kind == "replace":
        items[_index(items, part, op, len(items) - 1)] = op["value"]
    else:
        del items[_index(items, part, op, len(items) - 1)]


def apply_patch(doc: JsonDict, ops: Any, patchable: set[str]) -> JsonDict:
    """Apply `ops` to a copy of `doc`; only top-level keys in `patchable` may change."""
    if not isinstance(ops, list) or not ops:
        raise Invalid("A JSON patch must be a non-empty list of operations.")
    result = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict):
            raise Invalid(f"Invalid patch operation {op!r}")
        kind = op.get("op")
        parts = _split(op.get("path"))
        if parts[0] not in patchable:
            if parts[0] in doc or parts[0] in ("uuid", "id"):
                raise Invalid(f"'/{parts[0]}' is an internal attribute and can not be updated")
            raise Invalid(f"Invalid patch path '/{parts[0]}': no such field")
        if kind not in ("add", "replace", "remove"):
            raise Invalid(f"Invalid patch operation {kind!r} for '{op.get('path')}' "
                          "(add, replace or remove)")
        if kind != "remove" and "value" not in op:
            raise Invalid(f"Patch operation {kind} on '{op['path']}' needs a value")
        parent: Any = result
        for part in parts[:-1]:
            parent = _child(parent, part, op, kind)
        last = parts[-1]
        if isinstance(parent, list):  # RFC 6902 on an array (a template's steps, say)
            _patch_list(parent, last, op, kind)
            continue
        if not isinstance(parent, dict):
            raise Invalid(f"Can't {kind} '{op['path']}': its parent is not an object")
        if kind == "remove":
            if last not in parent:
                raise _patch_error(op, f"can't remove a non-existent object '{last}'")
            if len(parts) == 1:
                parent[last] = None
            else:
                del parent[last]
        elif kind == "replace" and last not in parent:
            raise _patch_error(op, f"can't replace a non-existent object '{last}'")
        else:
            parent[last] = op["value"]
    return result


# --- discovery (ironsight only) -------------------------------------------------------------


class DiscoveryLookup(_Strict):
    """`POST /v1/discovery/lookup`: the signals of a report (canonical BMC hosts)."""

    macs: list[str] = Field(default_factory=list, max_length=256)
    bmc_addresses: list[str] = Field(default_factory=list, max_length=8)

    @field_validator("macs")
    @classmethod
    def _macs(cls, v: list[str]) -> list[str]:
        return [normalize_mac(m) for m in v]


class DiscoveredNode(DiscoveryLookup):
    """`POST /v1/discovery/nodes`: a node for a machine that matches none, unless one
    matches after all (checked in the same transaction)."""

    node: NodeCreate
    traits: list[str] = Field(default_factory=list, max_length=50)
    status: Literal["pending", "approved"] = "pending"
    max_pending: int = Field(default=1000, ge=1)
    event: str = Field(default="Node auto-discovered", min_length=1, max_length=1024)


class DiscoveryDecision(_Strict):
    """`POST /v1/discovery/approve` and `/reject`: the nodes (UUIDs or names)."""

    nodes: list[str] = Field(min_length=1, max_length=1000)
