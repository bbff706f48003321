"""Ironic's project-scoped access: a caller acting for a project (a Keystone token scoped to a
project that is not one of the operators' `allowed_projects`, or an http_basic user given a
project) sees and acts on what its project owns or leases, by the rules of Ironic 39's default
policy (ironic/common/policy.py), and on nothing else.

One table says, for each route, which of Ironic's check strings applies and under which policy
name (the name is what a 403 says, as Ironic's "Access was denied to the following resource").
`authorize` reads it before any endpoint runs; what depends on the body (the owner of a new
node, the fields a PATCH touches) and what a list may show are asked by the endpoints
(`check_node_create`, `check_node_patch`, `owned_by`, `list_project`).

A resource the caller may not even read is concealed as Ironic conceals it: 404 with the
resource's own "could not be found". A route not in the table is the system's only (403).
Callers acting on the whole fleet (noauth, system scope, operators' projects) pass untouched.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ironsight.baremetal.api.base import Ctx
from ironsight.baremetal.conductor.allocations import ALLOCATIONS
from ironsight.baremetal.conductor.inventory import (
    PORTGROUPS,
    RUNBOOKS,
    VOLUME_CONNECTORS,
    VOLUME_TARGETS,
    Kind,
)
from ironsight.common.api.endpoint import RequestContext
from ironsight.common.auth.identity import Identity, Role
from ironsight.common.exceptions import Forbidden, Invalid, IronsightError, NotFound

Row = dict[str, Any]


class Rule(enum.Enum):
    """The project side of Ironic's composite check strings (their system side is the role
    check every caller passes first)."""

    PROJECT_READER = "owner or lessee, reader"  # SYSTEM_OR_PROJECT_READER
    PROJECT_MEMBER = "owner or lessee, member"  # SYSTEM_OR_PROJECT_MEMBER
    OWNER_MEMBER_LESSEE_ADMIN = "owner member, lessee admin"
    OWNER_LESSEE_ADMIN = "owner or lessee, admin"  # SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN
    OWNER_ADMIN = "owner, admin"  # SYSTEM_MEMBER_OR_OWNER_ADMIN, SYSTEM_ADMIN_OR_OWNER_ADMIN
    OWNER_MEMBER = "owner, member"  # SYSTEM_MEMBER_OR_OWNER_MEMBER
    OWNER_READER = "owner, reader"  # SYSTEM_OR_OWNER_READER
    LIST = "any reader; the list shows the project's own"  # API_READER
    SYSTEM = "the system's only"


def allows(rule: Rule, role: Role, owner: bool, lessee: bool) -> bool:
    """Whether a caller of `role` whose project is the owner and/or lessee passes `rule`.
    Ironic's `manager` role is not told apart: a manager counts as an admin of its project."""
    match rule:
        case Rule.PROJECT_READER:
            return owner or lessee
        case Rule.PROJECT_MEMBER:
            return (owner or lessee) and role >= Role.MEMBER
        case Rule.OWNER_MEMBER_LESSEE_ADMIN:
            return (owner and role >= Role.MEMBER) or (lessee and role >= Role.ADMIN)
        case Rule.OWNER_LESSEE_ADMIN:
            return (owner or lessee) and role >= Role.ADMIN
        case Rule.OWNER_ADMIN:
            return owner and role >= Role.ADMIN
        case Rule.OWNER_MEMBER:
            return owner and role >= Role.MEMBER
        case Rule.OWNER_READER:
            return owner
        case Rule.LIST:
            return True
    return False


def denied(policy: str) -> Forbidden:
    return Forbidden(f"Access was denied to the following resource: {policy}")


def acting_project(ctx: Ctx) -> Identity | None:
    """The caller, when it acts for a project; None when it acts on the whole fleet."""
    identity = ctx.request.scope.get("state", {}).get("identity")
    return identity if isinstance(identity, Identity) and identity.project else None


def _relation(row: Row, caller: Identity) -> tuple[bool, bool]:
    """Whether the caller's project owns, and whether it leases, the resource."""
    return row.get("owner") == caller.project, row.get("lessee") == caller.project


def list_project(ctx: Ctx) -> str | None:
    """The project a list must be limited to (None: everything). A filter on another
    project's resources (`?owner=`) then finds nothing, as in Ironic 39 (200, empty)."""
    caller = acting_project(ctx)
    return None if caller is None else caller.project


# --- what a route is about -------------------------------------------------------------------

Resolver = Callable[[Ctx, str], Awaitable[tuple[Row, str]]]  # -> (node row, not-found text)


async def _node(ctx: Ctx, ident: str) -> tuple[Row, str]:
    return await ctx.deps.records.get_node(ident), f"Node {ident} could not be found."


def _via(kind: Kind, what: str) -> Resolver:
    """A resource that belongs to a node (port, portgroup, volume connector or target)."""

    async def resolve(ctx: Ctx, ident: str) -> tuple[Row, str]:
        row = await ctx.deps.records.inventory.get(kind, ident)
        missing = f"{what} {ident} could not be found."
        node = row.get("node_uuid")
        if node is None:
            return {"owner": None, "lessee": None}, missing
        return await ctx.deps.records.get_node(str(node)), missing

    return resolve


async def _port(ctx: Ctx, ident: str) -> tuple[Row, str]:
    row = await ctx.deps.records.get_port(ident)
    return (await ctx.deps.records.get_node(str(row["node_uuid"])),
            f"Port {ident} could not be found.")


def _owned(kind: Kind, what: str, public: bool = False) -> Resolver:
    """A resource with an owner of its own (allocation, runbook); a public runbook is every
    project's to read."""

    async def resolve(ctx: Ctx, ident: str) -> tuple[Row, str]:
        row = await ctx.deps.records.inventory.get(kind, ident)
        return ({"owner": row.get("owner"), "lessee": None,
                 "public": public and bool(row.get("public"))},
                f"{what} {ident} could not be found.")

    return resolve


@dataclass(frozen=True)
class Entry:
    methods: frozenset[str]
    path: re.Pattern[str]
    rule: Rule
    policy: str
    resolve: Resolver | None = None  # what the first `{}` of the path names
    read: Rule = Rule.PROJECT_READER  # who may know it exists (else: concealed, 404)
    read_policy: str = "baremetal:node:get"
    conceal: bool = True  # False: one it may not read is a 403 (Ironic's runbooks)


def _entry(methods: Iterable[str], template: str, rule: Rule, policy: str,
           resolve: Resolver | None = None, read: Rule = Rule.PROJECT_READER,
           read_policy: str = "baremetal:node:get", conceal: bool = True) -> Entry:
    regex = re.escape(template).replace(r"\{\}", "([^/]+)").replace(r"\{rest\}", "(?:/.*)?")
    return Entry(frozenset(methods), re.compile(regex + "/?"), rule, policy, resolve, read,
                 read_policy, conceal)


GET, PUT, POST, PATCH, DELETE = {"GET", "HEAD"}, {"PUT"}, {"POST"}, {"PATCH"}, {"DELETE"}
N = "/v1/nodes/{}"
R = Rule
_PORTGROUP = _via(PORTGROUPS, "Portgroup")
_CONNECTOR = _via(VOLUME_CONNECTORS, "Volume connector")
_TARGET = _via(VOLUME_TARGETS, "Volume target")
_ALLOCATION = _owned(ALLOCATIONS, "Allocation")
_RUNBOOK = _owned(RUNBOOKS, "Runbook", public=True)


def _alloc(methods: set[str], rule: Rule, policy: str) -> Entry:
    return _entry(methods, "/v1/allocations/{}", rule, policy, _ALLOCATION, R.OWNER_READER,
                  "baremetal:allocation:get")


def _runbook(methods: set[str], template: str, rule: Rule, policy: str) -> Entry:
    return _entry(methods, template, rule, policy, _RUNBOOK, R.OWNER_READER,
                  "baremetal:runbook:get", conceal=False)


# First match wins: specific paths before the catch-all under a node.
TABLE: tuple[Entry, ...] = (
    _entry(GET, "/v1/nodes", R.LIST, "baremetal:node:list"),
    _entry(GET, "/v1/nodes/detail", R.LIST, "baremetal:node:list"),
    _entry(POST, "/v1/nodes", R.LIST, "baremetal:node:create"),  # check_node_create
    _entry(GET, N, R.PROJECT_READER, "baremetal:node:get", _node),
    _entry(PATCH, N, R.PROJECT_MEMBER, "baremetal:node:update", _node),  # + check_node_patch
    _entry(DELETE, N, R.OWNER_ADMIN, "baremetal:node:delete:self_owned_node", _node),
    _entry(GET, f"{N}/states", R.PROJECT_READER, "baremetal:node:get_states", _node),
    _entry(PUT, f"{N}/states/power", R.PROJECT_MEMBER, "baremetal:node:set_power_state", _node),
    _entry(PUT, f"{N}/states/provision", R.OWNER_MEMBER_LESSEE_ADMIN,
           "baremetal:node:set_provision_state", _node),
    _entry(PUT, f"{N}/states/raid", R.OWNER_MEMBER, "baremetal:node:set_raid_state", _node),
    _entry(GET, f"{N}/states/console", R.OWNER_MEMBER, "baremetal:node:get_console", _node),
    _entry(PUT, f"{N}/states/console", R.OWNER_MEMBER, "baremetal:node:set_console_state",
           _node),
    _entry(PUT, f"{N}/states/boot_mode", R.PROJECT_MEMBER, "baremetal:node:set_boot_mode",
           _node),
    _entry(PUT, f"{N}/states/secure_boot", R.PROJECT_MEMBER, "baremetal:node:set_secure_boot",
           _node),
    _entry(GET, f"{N}/management/boot_device{{rest}}", R.OWNER_ADMIN,
           "baremetal:node:get_boot_device", _node),
    _entry(PUT, f"{N}/management/boot_device", R.OWNER_ADMIN,
           "baremetal:node:set_boot_device", _node),
    _entry(PUT, f"{N}/management/inject_nmi", R.OWNER_ADMIN, "baremetal:node:inject_nmi",
           _node),
    _entry(GET, f"{N}/management/indicators{{rest}}", R.PROJECT_READER,
           "baremetal:node:get_indicator_state", _node),
    _entry(PUT, f"{N}/management/indicators{{rest}}", R.OWNER_MEMBER,
           "baremetal:node:set_indicator_state", _node),
    _entry(PUT | DELETE, f"{N}/maintenance", R.OWNER_MEMBER_LESSEE_ADMIN,
           "baremetal:node:set_maintenance", _node),
    _entry(GET, f"{N}/validate", R.OWNER_MEMBER_LESSEE_ADMIN, "baremetal:node:validate",
           _node),
    _entry(GET, f"{N}/vifs", R.PROJECT_READER, "baremetal:node:vif:list", _node),
    _entry(POST, f"{N}/vifs", R.OWNER_MEMBER_LESSEE_ADMIN, "baremetal:node:vif:attach",
           _node),
    _entry(DELETE, f"{N}/vifs/{{}}", R.OWNER_MEMBER_LESSEE_ADMIN, "baremetal:node:vif:detach",
           _node),
    _entry(GET, f"{N}/traits", R.PROJECT_READER, "baremetal:node:traits:list", _node),
    _entry(PUT, f"{N}/traits{{rest}}", R.OWNER_ADMIN, "baremetal:node:traits:set", _node),
    _entry(DELETE, f"{N}/traits{{rest}}", R.OWNER_ADMIN, "baremetal:node:traits:delete",
           _node),
    _entry(GET, f"{N}/bios{{rest}}", R.PROJECT_READER, "baremetal:node:bios:get", _node),
    _entry(GET, f"{N}/firmware", R.PROJECT_READER, "baremetal:node:firmware:get", _node),
    _entry(GET, f"{N}/history{{rest}}", R.OWNER_READER, "baremetal:node:history:get", _node),
    _entry(GET, f"{N}/inventory", R.OWNER_READER, "baremetal:node:inventory:get", _node),
    # ironsight's own: as the inventory (the boot's addresses and the ramdisk's errors)
    _entry(GET, f"{N}/inspection/attempts", R.OWNER_READER, "baremetal:node:inventory:get",
           _node),
    _entry(GET, f"{N}/inspection/logs", R.OWNER_READER, "baremetal:node:inventory:get",
           _node),
    _entry(GET, f"{N}/vmedia", R.PROJECT_READER, "baremetal:node:vmedia:get", _node),
    _entry(POST, f"{N}/vmedia", R.PROJECT_MEMBER, "baremetal:node:vmedia:attach", _node),
    _entry(DELETE, f"{N}/vmedia", R.PROJECT_MEMBER, "baremetal:node:vmedia:detach", _node),
    _entry(GET, f"{N}/children", R.PROJECT_READER, "baremetal:node:get", _node),
    _entry(GET, f"{N}/ports{{rest}}", R.PROJECT_READER, "baremetal:port:list", _node),
    # ironsight's own: the node and its ports together
    _entry(GET, f"{N}/snapshot", R.PROJECT_READER, "baremetal:port:list", _node),
    _entry(GET, f"{N}/portgroups{{rest}}", R.PROJECT_READER, "baremetal:portgroup:list",
           _node),
    _entry(GET, f"{N}/volume{{rest}}", R.PROJECT_READER, "baremetal:volume:list", _node),
    _entry(GET, f"{N}/allocation", R.PROJECT_READER, "baremetal:allocation:get", _node),
    _entry({"POST"}, f"{N}/history", R.SYSTEM, "baremetal:node:update", _node),
    _entry({"GET", "POST", "PUT", "PATCH", "DELETE"}, f"{N}/vendor_passthru{{rest}}", R.SYSTEM,
           "baremetal:node:vendor_passthru", _node),
    # anything else under a node: the node first (404 or concealed), then the endpoint's answer
    _entry(GET, f"{N}{{rest}}", R.PROJECT_READER, "baremetal:node:get", _node),
    _entry(PUT | POST | PATCH | DELETE, f"{N}{{rest}}", R.SYSTEM, "baremetal:node:update",
           _node),
    # ports and portgroups: their node's owner and lessee
    _entry(GET, "/v1/ports", R.LIST, "baremetal:port:list"),
    _entry(GET, "/v1/ports/detail", R.LIST, "baremetal:port:list"),
    _entry(POST, "/v1/ports", R.LIST, "baremetal:port:create"),  # check_create
    _entry(GET, "/v1/ports/{}", R.PROJECT_READER, "baremetal:port:get", _port),
    _entry(PATCH, "/v1/ports/{}", R.OWNER_ADMIN, "baremetal:port:update", _port),
    _entry(DELETE, "/v1/ports/{}", R.OWNER_ADMIN, "baremetal:port:delete", _port),
    _entry(GET, "/v1/portgroups", R.LIST, "baremetal:portgroup:list"),
    _entry(GET, "/v1/portgroups/detail", R.LIST, "baremetal:portgroup:list"),
    _entry(POST, "/v1/portgroups", R.LIST, "baremetal:portgroup:create"),  # check_create
    _entry(GET, "/v1/portgroups/{}{rest}", R.PROJECT_READER, "baremetal:portgroup:get",
           _PORTGROUP),
    _entry(PATCH, "/v1/portgroups/{}", R.OWNER_ADMIN, "baremetal:portgroup:update",
           _PORTGROUP),
    _entry(DELETE, "/v1/portgroups/{}", R.OWNER_ADMIN, "baremetal:portgroup:delete",
           _PORTGROUP),
    # volume connectors and targets: their node's
    _entry(GET, "/v1/volume", R.LIST, "baremetal:volume:list"),
    _entry(GET, "/v1/volume/connectors", R.LIST, "baremetal:volume:list"),
    _entry(GET, "/v1/volume/connectors/detail", R.LIST, "baremetal:volume:list"),
    _entry(GET, "/v1/volume/targets", R.LIST, "baremetal:volume:list"),
    _entry(GET, "/v1/volume/targets/detail", R.LIST, "baremetal:volume:list"),
    _entry(POST, "/v1/volume/connectors", R.LIST, "baremetal:volume:create"),
    _entry(POST, "/v1/volume/targets", R.LIST, "baremetal:volume:create"),
    _entry(GET, "/v1/volume/connectors/{}", R.PROJECT_READER, "baremetal:volume:get",
           _CONNECTOR),
    _entry(PATCH, "/v1/volume/connectors/{}", R.OWNER_MEMBER_LESSEE_ADMIN,
           "baremetal:volume:update", _CONNECTOR),
    _entry(DELETE, "/v1/volume/connectors/{}", R.OWNER_LESSEE_ADMIN, "baremetal:volume:delete",
           _CONNECTOR),
    _entry(GET, "/v1/volume/targets/{}", R.PROJECT_READER, "baremetal:volume:get", _TARGET),
    _entry(PATCH, "/v1/volume/targets/{}", R.OWNER_MEMBER_LESSEE_ADMIN,
           "baremetal:volume:update", _TARGET),
    _entry(DELETE, "/v1/volume/targets/{}", R.OWNER_LESSEE_ADMIN, "baremetal:volume:delete",
           _TARGET),
    # allocations and runbooks: their own owner (a runbook may be public)
    _entry(GET, "/v1/allocations", R.LIST, "baremetal:allocation:list"),
    _entry(POST, "/v1/allocations", R.LIST, "baremetal:allocation:create"),  # check_create
    _alloc(GET, R.OWNER_READER, "baremetal:allocation:get"),
    _alloc(PATCH, R.OWNER_MEMBER, "baremetal:allocation:update"),
    _alloc(DELETE, R.OWNER_MEMBER, "baremetal:allocation:delete"),
    _entry(GET, "/v1/runbooks", R.LIST, "baremetal:runbook:list"),
    _entry(GET, "/v1/runbooks/detail", R.LIST, "baremetal:runbook:list"),
    _entry(POST, "/v1/runbooks", R.LIST, "baremetal:runbook:create"),  # check_create
    _runbook(GET, "/v1/runbooks/{}{rest}", R.OWNER_READER, "baremetal:runbook:get"),
    _runbook(PATCH, "/v1/runbooks/{}", R.OWNER_ADMIN, "baremetal:runbook:update"),
    _runbook(DELETE, "/v1/runbooks/{}", R.OWNER_ADMIN, "baremetal:runbook:delete"),
    _runbook(PUT | DELETE, "/v1/runbooks/{}/traits{rest}", R.OWNER_ADMIN,
             "baremetal:runbook:update"),
)
# Everything else (chassis, drivers, conductors, deploy templates, shards, events, inspection
# rules) is the system's: Ironic's SYSTEM_READER / SYSTEM_ADMIN.
SYSTEM_ONLY = {"chassis": "chassis", "drivers": "driver", "conductors": "conductor",
               "deploy_templates": "deploy_template", "shards": "shards", "events": "events",
               "inspection_rules": "inspection_rule"}


def _system_policy(method: str, path: str) -> str:
    parts = path.strip("/").split("/")
    what = SYSTEM_ONLY.get(parts[1] if len(parts) > 1 else "", parts[-1])
    return f"baremetal:{what}:{'get' if method in GET else 'update'}"


def _entry_for(method: str, path: str) -> tuple[Entry, str | None] | None:
    """The table's entry for a request, and what the first `{}` of its path names."""
    for entry in TABLE:
        match = entry.path.fullmatch(path) if method in entry.methods else None
        if match is not None:
            return entry, (match.group(1) if entry.resolve is not None else None)
    return None


async def _readable(ctx: Ctx, entry: Entry, ident: str, caller: Identity
                    ) -> tuple[bool, bool]:
    """(owner, lessee) of the resource; concealed (404) or refused (403) when the caller's
    project may not even read it."""
    assert entry.resolve is not None
    row, missing = await entry.resolve(ctx, ident)
    owner, lessee = _relation(row, caller)
    if not (allows(entry.read, caller.role, owner, lessee) or row.get("public")):
        raise NotFound(missing) if entry.conceal else denied(entry.read_policy)
    return owner, lessee


async def authorize(ctx: Ctx) -> None:
    """Refuse (403) or conceal (404) what the caller's project may not do or see."""
    caller = acting_project(ctx)
    if caller is None:
        return
    method, path = ctx.request.method, ctx.request.url.path
    found = _entry_for(method, path)
    if found is None:
        raise denied(_system_policy(method, path))
    entry, ident = found
    if ident is None:
        if entry.rule is Rule.SYSTEM:
            raise denied(entry.policy)
        return
    owner, lessee = await _readable(ctx, entry, ident, caller)
    if entry.rule is not entry.read and not allows(entry.rule, caller.role, owner, lessee):
        raise denied(entry.policy)


async def conceal(request: Request, caller: Identity) -> str | None:
    """Before a project's caller is refused for its role: the resource's "not found" when
    the project may not know it exists (Ironic looks the node up before weighing the role:
    another project's node is a 404 whatever the role), else None."""
    found = _entry_for(request.method, request.url.path)
    if found is None or found[1] is None:
        return None
    spec = request.app.state.spec
    try:
        version = spec.versions.negotiate(request)
    except IronsightError:
        version = spec.versions.minimum
    ctx: Ctx = RequestContext(request, version, spec, request.app.state.deps)
    try:
        await _readable(ctx, found[0], found[1], caller)
    except NotFound as exc:
        return exc.message
    except Forbidden:
        return None
    return None


# --- what a project's caller sees of a node it does not own --------------------------------

# Ironic's get:<field> policies (SYSTEM_OR_OWNER_READER): a lessee sees these redacted.
_OWNER_ONLY_FIELDS = ("driver_info", "driver_internal_info", "last_error", "reservation")


def redact(ctx: Ctx, row: Row, doc: dict[str, Any]) -> None:
    """Hide from a lessee's caller the node fields only its owner may read, as Ironic's
    node_sanitize does (a row without `owner` loaded counts as not owned)."""
    caller = acting_project(ctx)
    if caller is None or row.get("owner") == caller.project:
        return
    for name in _OWNER_ONLY_FIELDS:
        if name in doc:
            text = f"** Redacted - requires baremetal:node:get:{name} permission. **"
            doc[name] = {"content": text} if isinstance(doc[name], dict) else text


# --- what depends on the body ----------------------------------------------------------------

# Node fields a project may not change (Ironic's update:owner, chassis_uuid, conductor_group,
# shard, parent_node, disable_power_off: system only), those only its owner may (with the
# role), and those a lessee may too (instance_info, extra: the node's users').
_SYSTEM_FIELDS = {"owner": "owner", "chassis_uuid": "chassis_uuid",
                  "conductor_group": "conductor_group", "shard": "shard",
                  "parent_node": "parent_node", "disable_power_off": "disable_power_off"}
_OWNER_MEMBER_FIELDS = {"driver_info", "properties", "name", "lessee", "network_data",
                        "retired", "retired_reason", "instance_uuid"}


def check_node_patch(ctx: Ctx, node: Row, fields: Iterable[str]) -> None:
    """The fields a project's PATCH of a node touches, each by its own rule."""
    caller = acting_project(ctx)
    if caller is None:
        return
    owner, lessee = _relation(node, caller)
    for name in sorted(set(fields)):
        if name in _SYSTEM_FIELDS:
            raise denied(f"baremetal:node:update:{_SYSTEM_FIELDS[name]}")
        if (name == "driver" or name.endswith("_interface")) and not allows(
                Rule.OWNER_ADMIN, caller.role, owner, lessee):
            raise denied("baremetal:node:update:driver_interfaces")
        if name in _OWNER_MEMBER_FIELDS and not allows(
                Rule.OWNER_MEMBER, caller.role, owner, lessee):
            raise denied(f"baremetal:node:update:{name}")
        if name == "instance_info" and not allows(
                Rule.OWNER_MEMBER_LESSEE_ADMIN, caller.role, owner, lessee):
            raise denied("baremetal:node:update_instance_info")


def owned_by(ctx: Ctx, values: Row, what: str) -> Row:
    """A new node, allocation or runbook of a project's caller: its owner is that project
    (Ironic's create:self_owned_node, create_restricted); another owner is refused. A node
    needs a project admin, an allocation a member, a runbook an admin (Ironic's manager)."""
    caller = acting_project(ctx)
    if caller is None:
        return values
    needed = Role.MEMBER if what == "allocation" else Role.ADMIN
    policy = {"node": "baremetal:node:create", "allocation": "baremetal:allocation:create",
              "runbook": "baremetal:runbook:create"}[what]
    if caller.role < needed:
        raise denied(policy)
    owner = values.get("owner")
    if owner not in (None, caller.project):
        if what == "node":  # Ironic 39's words and status
            raise Invalid("Cannot create a node as a project scoped admin with an owner "
                          "other than your own project.")
        if what == "allocation":
            raise Forbidden(f"Cannot create allocation with an owner Project ID value {owner} "
                            f"not matching the requester Project ID {caller.project}. Policy "
                            "baremetal:allocation:create_restricted is required for this "
                            "capability.")
        raise denied(policy)
    if what == "runbook" and values.get("public"):
        raise Invalid("Cannot create a public runbook as a project scoped admin.")
    return {**values, "owner": caller.project}


async def check_create_on_node(ctx: Ctx, node_ident: str | None, policy: str,
                               rule: Rule = Rule.OWNER_ADMIN) -> None:
    """A port, portgroup or volume resource created on a node: by that node's rule. A node
    the caller may not read is named as not found (Ironic conceals it)."""
    caller = acting_project(ctx)
    if caller is None or node_ident is None:
        return
    owner, lessee = _relation(await ctx.deps.records.get_node(node_ident), caller)
    if not (owner or lessee):
        raise NotFound(f"Node {node_ident} could not be found.")
    if not allows(rule, caller.role, owner, lessee):
        raise denied(policy)
