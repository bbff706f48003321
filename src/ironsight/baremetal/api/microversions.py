"""Which microversion introduced each route, top-level resource and list filter of the
bare-metal API, and how Ironic 39 refuses a request older than that: one table, read by the
endpoint wrapper before any endpoint runs (`check`), by `GET /v1` (`resource_links`) and by
the list endpoints (`check_filters`).

Ironic refuses in three ways, depending on how each controller was written over the years:
404 (the route did not exist), 405 (writes to deploy templates and runbooks; traits written
at an old version fall into pecan's generic controller) and 406 (reads whose controller
existed but whose feature did not: `GET .../traits`, `PUT .../states/raid`). Each entry
says which, as recorded against Ironic 39 (tests/functional/api/ironic39).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ironsight.common.api.versions import Version
from ironsight.common.exceptions import IronsightError, NotAcceptable, NotFound, RoutingError

ALL = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
READS = frozenset({"GET", "HEAD"})
WRITES = ALL - READS
NOT_ACCEPTABLE = "Request not acceptable."


@dataclass(frozen=True)
class Gate:
    """Requests matching `methods` and `path` below 1.`minor` are refused with `refusal`."""

    methods: frozenset[str]
    template: str
    path: re.Pattern[str]
    minor: int
    refusal: int
    message: str
    # refused by Ironic's web framework (pecan), not by its API: `RoutingError`'s form
    framework: bool = False
    allow: str = ""

    def refuse(self) -> IronsightError:
        if self.framework:
            return RoutingError(self.message or "The resource could not be found.",
                                self.refusal, description=self.message,
                                headers={"Allow": self.allow} if self.allow else None)
        if self.refusal == 406:
            return NotAcceptable(self.message or NOT_ACCEPTABLE)
        if self.refusal == 404:
            return NotFound(self.message or "The resource could not be found.")
        return IronsightError(self.message or "The method is not allowed for this resource.",
                              code=self.refusal)


def _pattern(template: str) -> re.Pattern[str]:
    """`/v1/nodes/{}/traits{rest}`: `{}` one segment, `{rest}` anything after (or nothing)."""
    regex = re.escape(template).replace(r"\{\}", "[^/]+").replace(r"\{rest\}", "(/.*)?")
    return re.compile(regex + "/?")


def gate(methods: Iterable[str], template: str, minor: int, refusal: int = 404,
         message: str = "", *, framework: bool = False, allow: str = "") -> Gate:
    return Gate(frozenset(methods), template, _pattern(template), minor, refusal, message,
                framework, allow)


def unrouted(methods: Iterable[str], template: str, minor: int, refusal: int = 404,
             allow: str = "") -> Gate:
    """A route pecan did not find below its version: the framework's bare answer."""
    return gate(methods, template, minor, refusal, framework=True, allow=allow)


NOT_SUPPORTED = "The API is not supported for this version"


def _resource(name: str, minor: int, *, writes: int = 404, what: str = "",
              message: str = "", framework: bool = False) -> list[Gate]:
    """A top-level resource: everything under /v1/<name>."""
    message = f"The API version does not allow {what}" if what else message
    return [gate(READS, f"/v1/{name}{{rest}}", minor, 404, message, framework=framework),
            gate(WRITES, f"/v1/{name}{{rest}}", minor, writes, message, framework=framework)]


NODE = "/v1/nodes/{}"
# Top-level resources, each with the version of its first appearance (Ironic's
# VERSIONED_CONTROLLERS); `GET /v1` links them from there on.
RESOURCES: Mapping[str, int] = {
    "chassis": 1, "portgroups": 23, "volume": 32, "lookup": 22, "heartbeat": 22,
    "conductors": 49, "allocations": 52, "events": 54, "deploy_templates": 55, "shards": 82,
    "continue_inspection": 84, "runbooks": 92, "inspection_rules": 96,
}

GATES: tuple[Gate, ...] = (
    *_resource("portgroups", 23, message=NOT_SUPPORTED),
    *_resource("volume", 32, message=NOT_SUPPORTED),
    *_resource("lookup", 22, message="Resource could not be found."),
    *_resource("heartbeat", 22, message="Resource could not be found."),
    *_resource("conductors", 49, message=NOT_SUPPORTED),
    *_resource("allocations", 52, writes=405, what="allocations"),
    gate({"PATCH"}, "/v1/allocations/{}", 57, 405,
         "The API version does not allow updating allocations"),
    *_resource("events", 54, message=NOT_SUPPORTED),
    *_resource("deploy_templates", 55, writes=405, what="deploy templates", framework=True),
    *_resource("shards", 82, what="shards"),
    *_resource("runbooks", 92, writes=405, what="runbooks", framework=True),
    gate(ALL, "/v1/runbooks/{}/traits{rest}", 112, 404,
         "The API version does not allow runbook traits"),
    *_resource("inspection_rules", 96, writes=405, what="inspection rules"),
    # node sub-resources (Ironic's NodesController._lookup and the controllers' decorators)
    unrouted(ALL, f"{NODE}/portgroups{{rest}}", 24),
    unrouted(ALL, f"{NODE}/vifs{{rest}}", 28),
    gate(ALL, f"{NODE}/volume{{rest}}", 32, 404, NOT_SUPPORTED),
    unrouted(ALL, f"{NODE}/bios{{rest}}", 40),
    unrouted(ALL, f"{NODE}/allocation{{rest}}", 52),
    unrouted(ALL, f"{NODE}/history{{rest}}", 78),
    unrouted(ALL, f"{NODE}/inventory{{rest}}", 81),
    gate(ALL, f"{NODE}/children{{rest}}", 83),
    unrouted(ALL, f"{NODE}/firmware{{rest}}", 86),
    unrouted(ALL, f"{NODE}/vmedia{{rest}}", 89),
    gate(READS, f"{NODE}/vmedia{{rest}}", 93),
    gate(READS, f"{NODE}/traits{{rest}}", 37, 406),
    # pecan's generic node controller answers the write: its methods are Allow
    unrouted(WRITES, f"{NODE}/traits{{rest}}", 37, 405, allow="DELETE, GET, PATCH, POST"),
    gate({"PUT"}, f"{NODE}/states/raid", 12, 406),
    gate(ALL, f"{NODE}/management/inject_nmi", 29, 404, "Resource could not be found."),
    # indicators: Ironic 39 serves them at every version (recorded at 1.62)
    gate(ALL, f"{NODE}/states/boot_mode", 76, 404,
         "This endpoint is supported starting with the API version 1.76"),
    gate(ALL, f"{NODE}/states/secure_boot", 76, 404,
         "This endpoint is supported starting with the API version 1.76"),
    gate(ALL, "/v1/drivers/{}/raid/logical_disk_properties", 12, 406),
)


def check(method: str, path: str, version: Version) -> None:
    """Refuse a request older than its route, the way Ironic does."""
    for entry in GATES:
        if version[1] < entry.minor and method in entry.methods and entry.path.fullmatch(path):
            raise entry.refuse()


def resource_links(version: Version) -> list[str]:
    """The top-level resources `GET /v1` links at `version`, besides nodes, ports, drivers."""
    return [name for name, minor in RESOURCES.items() if minor <= version[1]]


# List filters (query parameters) by collection: the version that introduced each, and
# whether Ironic's refusal names it ("The minimal required API version should be 1.N").
FILTERS: Mapping[str, Mapping[str, tuple[int, bool]]] = {
    "nodes": {"provision_state": (9, False), "driver": (16, True),
              "resource_class": (21, True), "fault": (42, True),
              "conductor_group": (46, True), "conductor": (49, True),
              "owner": (50, True), "lessee": (65, True), "shard": (82, True),
              "sharded": (82, True), "parent_node": (83, True),
              "include_children": (83, True), "instance_name": (104, True),
              "detail": (43, False), "fields": (8, False)},
    "ports": {"portgroup": (24, False), "shard": (82, True), "fields": (8, False),
              "detail": (43, False), "conductor_group": (99, False)},
    "portgroups": {"fields": (8, False), "detail": (43, False), "shard": (106, True)},
}


def check_filters(collection: str, params: Iterable[str], version: Version) -> None:
    for name in params:
        found = FILTERS.get(collection, {}).get(name)
        if found is not None and version[1] < found[0]:
            minor, named = found
            raise NotAcceptable(
                "Request not acceptable. The minimal required API version should be "
                f"1.{minor}" if named else NOT_ACCEPTABLE)
