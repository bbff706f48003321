"""`/v1/deploy_templates` (1.55): stored and validated; ironsight runs no deploy steps."""

from __future__ import annotations

from ironsight.baremetal.api import stored
from ironsight.baremetal.api.inventory_schemas import DeployTemplateFields
from ironsight.baremetal.conductor import inventory

KIND = inventory.DEPLOY_TEMPLATES

RESOURCE = stored.Resource(
    kind=KIND, collection="deploy_templates", minor=55,
    fields={"uuid": 55, "name": 55, "steps": 55, "extra": 55, "created_at": 55,
            "updated_at": 55},
    list_fields=("uuid", "name"),
    sort_keys=frozenset({"id", "uuid", "name", "created_at", "updated_at"}),
    model=DeployTemplateFields, patchable=frozenset({"name", "steps", "extra"}),
    ident="template_ident")

routes = stored.build(RESOURCE)
