"""`/v1/volume` (1.32): volume connectors and targets, stored (ironsight attaches no volumes:
its storage interface is `noop`), and `/v1/nodes/{node}/volume/...`."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api import project_scope, stored
from ironsight.baremetal.api.base import Ctx, links
from ironsight.baremetal.api.inventory_schemas import VolumeConnectorFields, VolumeTargetFields
from ironsight.baremetal.conductor import inventory
from ironsight.common.api.endpoint import endpoint

MINOR = 32

CONNECTORS = stored.Resource(
    kind=inventory.VOLUME_CONNECTORS,
    collection="volume/connectors", minor=MINOR,
    fields={f: MINOR for f in ("uuid", "node_uuid", "type", "connector_id", "extra",
                               "created_at", "updated_at")},
    list_fields=("uuid", "node_uuid", "type", "connector_id"),
    sort_keys=frozenset({"id", "uuid", "type", "connector_id", "created_at", "updated_at"}),
    model=VolumeConnectorFields,
    patchable=frozenset({"node_uuid", "type", "connector_id", "extra"}),
    ident="connector_uuid", filters={"node": lambda raw: ("node_id", raw)},
    check_write=inventory.volume_node_off("connector", deleting=False),
    check_delete=inventory.volume_node_off("connector", deleting=True),
    project_list="node",
    project_create=("baremetal:volume:create", project_scope.Rule.OWNER_LESSEE_ADMIN))

TARGETS = stored.Resource(
    kind=inventory.VOLUME_TARGETS,
    collection="volume/targets", minor=MINOR,
    fields={f: MINOR for f in ("uuid", "node_uuid", "volume_type", "properties",
                               "boot_index", "volume_id", "extra", "created_at",
                               "updated_at")},
    list_fields=("uuid", "node_uuid", "volume_type", "boot_index", "volume_id"),
    sort_keys=frozenset({"id", "uuid", "volume_type", "volume_id", "boot_index",
                         "created_at", "updated_at"}),
    model=VolumeTargetFields,
    patchable=frozenset({"node_uuid", "volume_type", "properties", "boot_index",
                         "volume_id", "extra"}),
    ident="target_uuid", filters={"node": lambda raw: ("node_id", raw)},
    check_write=inventory.volume_node_off("target", deleting=False),
    check_delete=inventory.volume_node_off("target", deleting=True),
    project_list="node",
    project_create=("baremetal:volume:create", project_scope.Rule.OWNER_LESSEE_ADMIN))


@endpoint
async def volume_root(ctx: Ctx) -> Any:
    base = ctx.base_url
    return 200, {"links": links(base, "volume"),
                 "connectors": links(base, "volume/connectors"),
                 "targets": links(base, "volume/targets")}


@endpoint
async def node_volume_root(ctx: Ctx) -> Any:
    base, node = ctx.base_url, ctx.param("node")
    return 200, {"links": links(base, f"nodes/{node}/volume"),
                 "connectors": links(base, f"nodes/{node}/volume/connectors"),
                 "targets": links(base, f"nodes/{node}/volume/targets")}


def _node_list(res: stored.Resource) -> Any:
    @endpoint
    async def handler(ctx: Ctx) -> Any:
        return await stored.list_docs(res, ctx, detail=False,
                                      node=ctx.param("node"))
    return handler


routes = [
    Route("/v1/volume", volume_root, methods=["GET"]),
    Route("/v1/volume/", volume_root, methods=["GET"]),
    Route("/v1/nodes/{node}/volume", node_volume_root, methods=["GET"]),
    Route("/v1/nodes/{node}/volume/connectors", _node_list(CONNECTORS), methods=["GET"]),
    Route("/v1/nodes/{node}/volume/targets", _node_list(TARGETS), methods=["GET"]),
    *stored.build(CONNECTORS), *stored.build(TARGETS),
]
