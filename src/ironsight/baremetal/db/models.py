"""The bare-metal service's tables (SQLAlchemy Core: rows map straight to API documents)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

from ironsight.baremetal.interfaces import INTERFACE_FIELDS

metadata = MetaData()

VERSION_TABLE = "alembic_version_baremetal"

nodes = Table(
    "bm_nodes", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("name", String(255), nullable=True, unique=True),
    Column("driver", String(255), nullable=False),
    Column("driver_info", JSON, nullable=False, default=dict),
    Column("driver_internal_info", JSON, nullable=False, default=dict),
    Column("properties", JSON, nullable=False, default=dict),
    Column("extra", JSON, nullable=False, default=dict),
    Column("instance_info", JSON, nullable=False, default=dict),
    Column("instance_uuid", String(36), nullable=True),
    Column("provision_state", String(15), nullable=False),
    Column("target_provision_state", String(15), nullable=True),
    Column("provision_updated_at", DateTime, nullable=True),
    Column("power_state", String(15), nullable=True),
    Column("target_power_state", String(15), nullable=True),
    Column("power_synced_at", Float, nullable=True),
    Column("maintenance", Boolean, nullable=False, default=False),
    Column("maintenance_reason", Text, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("reservation", String(255), nullable=True),
    # raised each time the node is locked: fences writes made under an older lock
    Column("lock_epoch", Integer, nullable=False, default=0, server_default="0"),
    Column("inspection_started_at", DateTime, nullable=True),
    Column("inspection_finished_at", DateTime, nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=True),
    *(Column(name, String(255), nullable=True) for name in INTERFACE_FIELDS),
    # Ironic's other node fields (migration 0004): stored, validated and shown per version.
    Column("resource_class", String(80), nullable=True),
    Column("owner", String(255), nullable=True),
    Column("lessee", String(255), nullable=True),
    Column("description", Text, nullable=True),
    Column("protected", Boolean, nullable=False, default=False, server_default=false()),
    Column("protected_reason", Text, nullable=True),
    Column("retired", Boolean, nullable=False, default=False, server_default=false()),
    Column("retired_reason", Text, nullable=True),
    Column("conductor_group", String(255), nullable=False, default="", server_default=""),
    Column("shard", String(255), nullable=True),
    Column("parent_node", String(36), nullable=True),
    Column("automated_clean", Boolean, nullable=True),
    Column("instance_name", String(255), nullable=True),
    Column("network_data", JSON, nullable=True),
    Column("disable_power_off", Boolean, nullable=False, default=False,
           server_default=false()),
    # the step running now (always empty: the fake steps end at once)
    Column("deploy_step", JSON, nullable=True),
    Column("clean_step", JSON, nullable=True),
    Column("service_step", JSON, nullable=True),
    Index("bm_nodes_resource_class_idx", "resource_class"),
    Index("bm_nodes_instance_uuid_idx", "instance_uuid"),
    # 0005_inventory_resources: the node's chassis, and the allocation holding it (no foreign
    # keys, see the migration).
    Column("chassis_id", Integer, nullable=True),
    Column("allocation_id", Integer, nullable=True),
    # 0008_target_raid_config: the RAID configuration asked for (NULL: none, shown as {})
    Column("target_raid_config", JSON, nullable=True),
    # 0009_console_enabled: the console runs (set by the conductor, asked by the API)
    Column("console_enabled", Boolean, nullable=False, default=False, server_default=false()),
    # 0010_discovery: NULL for an enrolled node; a discovered node's approval (discovery.py):
    # pending or rejected (quarantined: no power or provisioning action), approved
    Column("discovery", String(16), nullable=True),
    # ... and the canonical hosts of every BMC its driver_info names (" h1 h2 ", common/bmc.py),
    # written with driver_info (db/api.py), so that discovery's lookup over every node reads
    # a short column instead of casting every node's driver_info to text
    Column("bmc_hosts", String(1024), nullable=True),
    Index("bm_nodes_provision_state_idx", "provision_state", "provision_updated_at"),
    Index("bm_nodes_reservation_idx", "reservation"),
    Index("bm_nodes_power_sync_idx", "driver", "power_synced_at"),
    Index("bm_nodes_discovery_idx", "discovery"),
    # fleet stamps (0011): what changed since a time
    Index("bm_nodes_updated_idx", "updated_at"),
    Index("bm_nodes_created_idx", "created_at"),
)

# A node's traits (Ironic's node traits, 1.37): what allocations match on.
node_traits = Table(
    "bm_node_traits", metadata,
    Column("node_id", Integer, ForeignKey("bm_nodes.id", ondelete="CASCADE"), nullable=False),
    Column("trait", String(255), nullable=False),
    Column("created_at", DateTime, nullable=True),
    PrimaryKeyConstraint("node_id", "trait"),
)

ports = Table(
    "bm_ports", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("address", String(18), nullable=False, unique=True),
    Column("node_id", Integer, ForeignKey("bm_nodes.id", ondelete="CASCADE"), nullable=False),
    Column("pxe_enabled", Boolean, nullable=False, default=True),
    Column("local_link_connection", JSON, nullable=False, default=dict),
    Column("physical_network", String(64), nullable=True),
    Column("extra", JSON, nullable=False, default=dict),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=True),
    # 0005_inventory_resources: membership of a portgroup (of the same node)
    Column("portgroup_id", Integer, nullable=True),  # no foreign key, see the migration
    Index("bm_ports_node_idx", "node_id"),
)

history = Table(
    "bm_node_history", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("node_id", Integer, ForeignKey("bm_nodes.id", ondelete="CASCADE"), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("severity", String(10), nullable=False),
    Column("event_type", String(32), nullable=False),
    Column("event", Text, nullable=False),
    Column("conductor", String(255), nullable=True),
    Column("user", String(255), nullable=True),
    Index("bm_history_node_idx", "node_id", "id"),
)

# the web console's sessions ended by a logout before their end: a session is its signed
# cookie, so a copy of one would stay good without this (baremetal/console/session.py)
console_revoked = Table(
    "bm_console_revoked", metadata,
    Column("session", String(64), primary_key=True),  # SHA-256 of its CSRF token, hex
    Column("expires_at", DateTime, nullable=False),  # when the cookie ends anyway
    Index("bm_console_revoked_expires_idx", "expires_at"),
)

conductors = Table(
    "bm_conductors", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("hostname", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("drivers", JSON, nullable=False, default=list),
    Column("started_at", DateTime, nullable=False),
    Column("heartbeat_at", DateTime, nullable=False),
    # 0005_inventory_resources
    Column("conductor_group", String(255), nullable=False, server_default=""),
)

# --- 0005_inventory_resources: Ironic's other inventory resources -------------------------


def _stamps() -> tuple[Column[Any], Column[Any]]:
    return (Column("created_at", DateTime, nullable=False),
            Column("updated_at", DateTime, nullable=True))


def _node_ref(nullable: bool = False, ondelete: str = "CASCADE") -> Column[Any]:
    return Column("node_id", Integer, ForeignKey("bm_nodes.id", ondelete=ondelete),
                  nullable=nullable)


chassis = Table(
    "bm_chassis", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("description", String(255), nullable=True),
    Column("extra", JSON, nullable=False, default=dict),
    *_stamps(),
)

portgroups = Table(
    "bm_portgroups", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("name", String(255), nullable=True, unique=True),
    _node_ref(),
    Column("address", String(18), nullable=True, unique=True),
    Column("standalone_ports_supported", Boolean, nullable=False, default=True),
    Column("mode", String(255), nullable=True),
    Column("properties", JSON, nullable=False, default=dict),
    Column("physical_network", String(64), nullable=True),
    Column("category", String(80), nullable=True),
    Column("dynamic_portgroup", Boolean, nullable=False, default=False),
    Column("internal_info", JSON, nullable=False, default=dict),
    Column("extra", JSON, nullable=False, default=dict),
    *_stamps(),
    Index("bm_portgroups_node_idx", "node_id"),
)

deploy_templates = Table(
    "bm_deploy_templates", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("steps", JSON, nullable=False, default=list),
    Column("description", String(255), nullable=True),
    Column("extra", JSON, nullable=False, default=dict),
    *_stamps(),
)

runbooks = Table(
    "bm_runbooks", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("steps", JSON, nullable=False, default=list),
    Column("description", String(255), nullable=True),
    Column("disable_ramdisk", Boolean, nullable=False, default=False),
    Column("public", Boolean, nullable=False, default=False),
    Column("owner", String(255), nullable=True),
    Column("extra", JSON, nullable=False, default=dict),
    # 1.112: traits of their own (before, the name was the one trait), changed only
    # through /v1/runbooks/{ident}/traits
    Column("traits", JSON, nullable=False, default=list),
    *_stamps(),
)

volume_connectors = Table(
    "bm_volume_connectors", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    _node_ref(),
    Column("type", String(32), nullable=False),
    Column("connector_id", String(255), nullable=False),
    Column("extra", JSON, nullable=False, default=dict),
    *_stamps(),
    UniqueConstraint("type", "connector_id", name="uniq_bm_volume_connectors_type_id"),
)

volume_targets = Table(
    "bm_volume_targets", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    _node_ref(),
    Column("volume_type", String(64), nullable=False),
    Column("properties", JSON, nullable=False, default=dict),
    Column("boot_index", Integer, nullable=False),
    Column("volume_id", String(36), nullable=False),
    Column("extra", JSON, nullable=False, default=dict),
    *_stamps(),
    UniqueConstraint("node_id", "boot_index", name="uniq_bm_volume_targets_node_boot"),
)

allocations = Table(
    "bm_allocations", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("name", String(255), nullable=True, unique=True),
    _node_ref(nullable=True, ondelete="SET NULL"),
    Column("state", String(15), nullable=False),
    Column("last_error", Text, nullable=True),
    Column("resource_class", String(80), nullable=True),
    Column("traits", JSON, nullable=False, default=list),
    Column("candidate_nodes", JSON, nullable=False, default=list),
    Column("owner", String(255), nullable=True),
    Column("extra", JSON, nullable=False, default=dict),
    # the replica (`host:pid`) processing an `allocating` allocation: a live one takes over
    # those of a dead one (Ironic's conductor_affinity); never shown by the API
    Column("conductor", String(255), nullable=True),
    *_stamps(),
)
