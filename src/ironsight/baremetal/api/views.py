"""Rows to API documents, in Ironic's shapes, with secrets masked."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.api.base import links
from ironsight.baremetal.conductor.agent import masked_internal_info
from ironsight.baremetal.interfaces import INTERFACE_FIELDS
from ironsight.baremetal.secrets import is_secret

MASK = "******"


def mask(info: Mapping[str, Any] | None, secret_keys: frozenset[str]) -> dict[str, Any]:
    return {k: (MASK if is_secret(k, secret_keys) and v not in (None, "") else v)
            for k, v in (info or {}).items()}


def iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC).isoformat()


# Every field of a node document; the keys of `fields=` are checked against this.
NODE_FIELDS = (
    "uuid", "name", "driver", "driver_info", "driver_internal_info", "properties", "extra",
    "instance_info", "instance_uuid", "instance_name", "provision_state",
    "target_provision_state", "provision_updated_at", "power_state", "target_power_state",
    "maintenance", "maintenance_reason", "fault", "last_error", "reservation",
    "inspection_started_at", "inspection_finished_at", "created_at", "updated_at",
    "console_enabled", "chassis_uuid", "clean_step", "deploy_step", "service_step",
    "raid_config", "target_raid_config", "conductor_group", "conductor", "resource_class",
    "owner", "lessee", "protected", "protected_reason", "retired", "retired_reason",
    "automated_clean", "description", "allocation_uuid", "network_data", "boot_mode",
    "secure_boot", "traits", "shard", "parent_node", "disable_power_off", "health",
    *INTERFACE_FIELDS,
)
NODE_LIST_FIELDS = ("uuid", "name", "instance_uuid", "power_state", "provision_state",
                    "maintenance")
# The microversion that introduced each field (Ironic 39's table): an older request does
# not see it, and may not set it.
FIELD_VERSIONS: dict[str, int] = {
    "driver_internal_info": 3, "name": 5, "inspection_finished_at": 6,
    "inspection_started_at": 6, "clean_step": 7, "raid_config": 12, "target_raid_config": 12,
    "network_interface": 20, "resource_class": 21, "storage_interface": 33, "traits": 37,
    "rescue_interface": 38, "bios_interface": 40, "fault": 42, "deploy_step": 44,
    "conductor_group": 46, "automated_clean": 47, "protected": 48, "protected_reason": 48,
    "conductor": 49, "owner": 50, "description": 51, "allocation_uuid": 52, "retired": 61,
    "retired_reason": 61, "lessee": 65, "network_data": 66, "boot_mode": 75,
    "secure_boot": 75, "shard": 82, "parent_node": 83, "firmware_interface": 86,
    "service_step": 87, "disable_power_off": 95, "instance_name": 104, "health": 109,
    **{f: 31 for f in ("boot_interface", "console_interface", "deploy_interface",
                       "inspect_interface", "management_interface", "power_interface",
                       "raid_interface", "vendor_interface")},
}
_DATES = ("provision_updated_at", "inspection_started_at", "inspection_finished_at",
          "created_at", "updated_at")
# Fields ironsight has no use for: always the value Ironic shows when unused.
_CONSTANT: dict[str, Any] = {
    "fault": None, "raid_config": {}, "boot_mode": None,
    "secure_boot": None, "health": None,
}
# Stored as NULL when empty, shown as an empty object.
_EMPTY_OBJECT = ("network_data", "clean_step", "deploy_step", "service_step",
                 "target_raid_config")

# Columns each document field needs (fields not listed map to the column of the same name).
NODE_FIELD_COLUMNS: dict[str, tuple[str, ...]] = {
    **{k: () for k in _CONSTANT},
    "conductor": ("reservation",),
    "traits": (),
    "allocation_uuid": ("allocation_id",),
    "chassis_uuid": ("chassis_id",),
}


def visible_fields(fields: Iterable[str], version: tuple[int, int]) -> tuple[str, ...]:
    """The fields a request at `version` may see."""
    return tuple(f for f in fields if FIELD_VERSIONS.get(f, 1) <= version[1])


def node_columns_for(fields: Iterable[str]) -> set[str]:
    cols = {"uuid"}
    for f in fields:
        cols.update(NODE_FIELD_COLUMNS.get(f, (f,)))
    return cols


def node_doc(row: Mapping[str, Any], base: str, fields: Iterable[str],
             secret_keys: frozenset[str], version: tuple[int, int],
             conductor_host: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for f in visible_fields(fields, version):
        if f in _CONSTANT:
            doc[f] = _CONSTANT[f]
        elif f in _EMPTY_OBJECT:
            doc[f] = row[f] or {}
        elif f == "traits":
            doc[f] = list(row.get("traits") or [])
        elif f in ("allocation_uuid", "chassis_uuid"):  # filled by the caller from the ids
            doc[f] = row.get(f)
        elif f == "conductor_group":
            doc[f] = row[f] or ""
        elif f == "driver_info":
            doc[f] = mask(row["driver_info"], secret_keys)
        elif f == "driver_internal_info":
            doc[f] = masked_internal_info(row[f])
        elif f in _DATES:
            doc[f] = iso(row[f])
        elif f == "conductor":
            doc[f] = conductor_host
        elif f == "provision_state":
            doc[f] = shown_state(row[f], version)
        else:
            doc[f] = row[f]
    uuid = row["uuid"]
    doc["links"] = links(base, f"nodes/{uuid}")
    return doc


def add_subresource_links(doc: dict[str, Any], base: str) -> None:
    uuid = doc["uuid"]
    doc["ports"] = links(base, f"nodes/{uuid}/ports")
    doc["states"] = links(base, f"nodes/{uuid}/states")
    doc["portgroups"] = links(base, f"nodes/{uuid}/portgroups")
    doc["volume"] = links(base, f"nodes/{uuid}/volume")


def shown_state(state: str, version: tuple[int, int]) -> str:
    """Before API 1.39 Ironic showed `inspect wait` as `inspecting`; before 1.2,
    `available` as no state at all."""
    if state == states.AVAILABLE and version < (1, 2):
        return None  # type: ignore[return-value]
    if state == states.INSPECTWAIT and version < (1, 39):
        return states.INSPECTING
    return state


PORT_FIELDS = ("uuid", "address", "node_uuid", "pxe_enabled", "local_link_connection", "extra",
               "physical_network", "created_at", "updated_at", "internal_info", "is_smartnic",
               "portgroup_uuid", "name", "description", "vendor", "category",
               "available_for_dynamic_portgroup")
PORT_LIST_FIELDS = ("uuid", "address")
# the microversion that added each port field: hidden below it, as Ironic does
PORT_FIELD_VERSIONS = {"internal_info": 18, "pxe_enabled": 19, "local_link_connection": 19,
                       "portgroup_uuid": 24, "physical_network": 34, "is_smartnic": 53,
                       "name": 88, "description": 97, "vendor": 100, "category": 101,
                       "available_for_dynamic_portgroup": 111}
_PORT_CONSTANT: dict[str, Any] = {"internal_info": {}, "is_smartnic": False,
                                  "name": None, "description": None,
                                  "vendor": None, "category": None,
                                  "available_for_dynamic_portgroup": False}


def port_doc(row: Mapping[str, Any], base: str, fields: Iterable[str],
             version: tuple[int, int]) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for f in fields:
        if PORT_FIELD_VERSIONS.get(f, 0) > version[1]:
            continue
        if f in _PORT_CONSTANT:
            doc[f] = _PORT_CONSTANT[f]
        elif f in ("created_at", "updated_at"):
            doc[f] = iso(row[f])
        else:
            doc[f] = row.get(f)
    doc["links"] = links(base, f"ports/{row['uuid']}")
    return doc


def history_doc(row: Mapping[str, Any], base: str, node_uuid: str,
                detail: bool) -> dict[str, Any]:
    doc = {"uuid": row["uuid"], "created_at": iso(row["created_at"]),
           "severity": row["severity"], "event": row["event"]}
    if detail:
        doc.update(event_type=row["event_type"], conductor=row["conductor"],
                   user=row.get("user"))
    doc["links"] = links(base, f"nodes/{node_uuid}/history/{row['uuid']}")
    return doc


def parse_fields(raw: str | None, allowed: Iterable[str]) -> list[str] | None:
    from ironsight.common.exceptions import Invalid

    if raw is None:
        return None
    wanted = [f.strip() for f in raw.split(",") if f.strip()]
    allowed_set = set(allowed)
    bad = [f for f in wanted if f not in allowed_set]
    if bad:
        raise Invalid(f'Field(s) "{", ".join(bad)}" are not valid')
    return wanted
