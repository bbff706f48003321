"""`POST /v1/events` (1.54): the networking service tells the bare-metal service that a
port was bound, unbound or deleted. Ironic hands these to the node's network interface;
ironsight's is `noop` (it wires no switch), so a valid batch is accepted and logged, and an
invalid one is refused naming the field, as Ironic's schema does."""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.routing import Route

from ironsight.baremetal.api.base import Ctx
from ironsight.baremetal.api.schemas import normalize_mac
from ironsight.common.api.endpoint import endpoint
from ironsight.common.ids import is_uuid_like

LOG = logging.getLogger(__name__)


class NetworkEvent(BaseModel):
    """Ironic's network event (its NETWORK_EVENT_VALIDATOR): Neutron's port fields."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    event: Literal["network.bind_port", "network.unbind_port", "network.delete_port"]
    port_id: str
    mac_address: str
    status: str
    device_id: str | None = None
    binding_host_id: str | None = Field(default=None, alias="binding:host_id")
    binding_vnic_type: str | None = Field(default=None, alias="binding:vnic_type")

    @field_validator("port_id", "device_id", "binding_host_id")
    @classmethod
    def _uuid(cls, value: str | None) -> str | None:
        if value is not None and not is_uuid_like(value):
            raise ValueError(f"Expected UUID but received {value}.")
        return value

    @field_validator("mac_address")
    @classmethod
    def _mac(cls, value: str) -> str:
        return normalize_mac(value)


class Events(BaseModel):
    model_config = ConfigDict(extra="forbid")

    events: list[NetworkEvent] = Field(min_length=1)


@endpoint
async def post_events(ctx: Ctx) -> Any:
    batch = Events.model_validate(await ctx.body())
    for event in batch.events:
        LOG.info("Network event %s for port %s (%s): status %s; the noop network interface "
                 "has nothing to do", event.event, event.port_id, event.mac_address,
                 event.status)
    return 204, None


routes = [Route("/v1/events", post_events, methods=["POST"])]
