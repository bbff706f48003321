"""`/v1/runbooks` (1.92): stored and validated; ironsight runs no clean or service steps."""

from __future__ import annotations

from ironsight.baremetal.api import stored
from ironsight.baremetal.api.inventory_schemas import RunbookFields
from ironsight.baremetal.conductor import inventory

KIND = inventory.RUNBOOKS

RESOURCE = stored.Resource(
    kind=KIND, collection="runbooks", minor=92,
    fields={"uuid": 92, "name": 92, "steps": 92, "disable_ramdisk": 92, "public": 92,
            "owner": 92, "description": 112, "extra": 92, "created_at": 92,
            "updated_at": 92},
    list_fields=("uuid", "name"),
    sort_keys=frozenset({"id", "uuid", "name", "owner", "created_at", "updated_at"}),
    model=RunbookFields,
    patchable=frozenset({"name", "steps", "disable_ramdisk", "public", "owner",
                         "description", "extra"}),
    ident="runbook_ident")

routes = stored.build(RESOURCE)
