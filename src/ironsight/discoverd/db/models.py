"""discoverd's own tables: the node cache (introspections and their lookup attributes) and the
stored data. Never the bare-metal service's tables."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    false,
)

metadata = MetaData()

VERSION_TABLE = "alembic_version_discoverd"

introspections = Table(
    "di_introspections", metadata,
    Column("uuid", String(36), primary_key=True),
    Column("state", String(16), nullable=False),
    Column("started_at", DateTime, nullable=False),
    Column("finished_at", DateTime, nullable=True),
    Column("error", Text, nullable=True),
    Column("manage_boot", Boolean, nullable=False, default=True),
    # Process (host:pid) running an active step (starting, processing...), so that a restart
    # can resume what it was doing.
    Column("owner", String(255), nullable=True),
    Column("updated_at", DateTime, nullable=True),
    # SHA-256 (hex) of the callback token the node's boot script carried (callback_token.py):
    # never the token itself, never in an API answer; cleared when the introspection ends.
    Column("callback_token_hash", String(64), nullable=True),
    # Which introspection of the node this is: 1 for the first, +1 at each start. Stored data
    # is kept per run (`di_data`).
    Column("run", Integer, nullable=False, server_default="1"),
    Index("di_introspections_state_idx", "state", "started_at"),
    Index("di_introspections_started_idx", "started_at", "uuid"),
    # the fleet index's stamps (0010): what changed since a time
    Index("di_introspections_updated_idx", "updated_at"),
)

# Lookup attributes of nodes under introspection: (name, value) is unique, so one MAC or BMC
# address can never point at two introspections at once. Rows go when the introspection ends.
attributes = Table(
    "di_attributes", metadata,
    Column("name", String(32), primary_key=True),
    Column("value", String(255), primary_key=True),
    Column("uuid", String(36), ForeignKey("di_introspections.uuid", ondelete="CASCADE"),
           nullable=False),
    Index("di_attributes_uuid_idx", "uuid"),
)

# The raw and processed data of a node's last runs ([processing] data_history of them), each
# with the start time of the introspection it came from.
data = Table(
    "di_data", metadata,
    Column("uuid", String(36), ForeignKey("di_introspections.uuid", ondelete="CASCADE"),
           primary_key=True),
    Column("run", Integer, primary_key=True, server_default="1"),
    Column("processed", Boolean, primary_key=True),
    Column("started_at", DateTime, nullable=False),
    Column("data", JSON, nullable=False),
    Column("stored_at", DateTime, nullable=False),
)

# Each introspection attempt's timeline (diagnosis.py): what was seen of the node, when and
# where (discoverd's API, its dnsmasq, its boot files, the ramdisk), per run; the attempt's
# end is its `finished` phase, with its result and failure code. The last runs are kept
# ([introspection] timeline_history of them).
phases = Table(
    "di_phases", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), ForeignKey("di_introspections.uuid", ondelete="CASCADE"),
           nullable=False),
    Column("run", Integer, nullable=False),
    Column("phase", String(32), nullable=False),
    Column("at", DateTime, nullable=False),
    Column("source", String(16), nullable=False),
    Column("details", JSON, nullable=True),
    Index("di_phases_run_idx", "uuid", "run", "id"),
)

# The ramdisk's log of each attempt as its progress beats sent it (timeline.py): the last
# LOG_KEEP bytes, and the stage the agent last said it was at; kept with the timelines.
ramdisk_logs = Table(
    "di_ramdisk_logs", metadata,
    Column("uuid", String(36), ForeignKey("di_introspections.uuid", ondelete="CASCADE"),
           primary_key=True),
    Column("run", Integer, primary_key=True),
    Column("stage", String(32), nullable=False),
    Column("log", Text, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)

# Callbacks refused before they could change anything (rejections.py): a report or hello
# that matched no introspection, or several, came for one in the wrong state, or had a bad
# or missing callback token; the newest [introspection] rejected_history are kept.
rejected = Table(
    "di_rejected", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", DateTime, nullable=False),
    Column("kind", String(16), nullable=False),  # report, hello
    Column("reason", String(32), nullable=False),
    Column("uuid", String(36), nullable=True),  # the node it matched, when it matched one
    Column("macs", JSON, nullable=False),
    Column("bmc_address", String(64), nullable=True),
    Column("source_address", String(64), nullable=True),
    Column("message", String(1024), nullable=False),
    # 0009_discovery: a discovery conflict (reason discovery_conflict) is a record of its
    # own until resolved: the signals that matched known nodes, the machine's identity, its
    # report (to create its node if it is a new machine), the resolution, and how often the
    # same machine came back meanwhile (`key`: one open record per machine)
    Column("key", String(255), nullable=True),
    Column("signals", JSON, nullable=True),
    Column("matched", JSON, nullable=True),
    Column("serial", String(255), nullable=True),
    Column("system_uuid", String(64), nullable=True),
    Column("data", JSON, nullable=True),
    Column("repeats", Integer, nullable=False, default=0, server_default="0"),
    Column("resolution", String(32), nullable=True),
    Column("resolved_at", DateTime, nullable=True),
    Column("resolved_by", String(255), nullable=True),
    Index("di_rejected_at_idx", "at"),
    Index("di_rejected_key_idx", "key"),
)

# Auto-discovery (0009_discovery). What identifies the machines discovery has seen: a claim
# per identity MAC and per (serial, system UUID) of a discovered node (taken before its node
# is created, so that two reports of one machine create one node), and the system key of
# every node whose report was processed (the serial lookup covers every node).
claims = Table(
    "di_claims", metadata,
    Column("kind", String(8), primary_key=True),  # mac, system
    Column("value", String(255), primary_key=True),
    Column("node_uuid", String(36), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Index("di_claims_node_idx", "node_uuid"),
)

# The nodes discovery created: where from (the rate limit counts per subnet), what the
# machine said it is, its manifest row, its BMC check, how often it was seen again.
discovered = Table(
    "di_discovered", metadata,
    Column("node_uuid", String(36), primary_key=True),
    Column("created_at", DateTime, nullable=False),
    Column("source_address", String(64), nullable=True),
    Column("subnet", String(64), nullable=True),
    Column("serial", String(255), nullable=True),
    Column("system_uuid", String(64), nullable=True),
    Column("manifest_serial", String(255), nullable=True),
    Column("bmc_probe", JSON, nullable=True),
    Column("seen_count", Integer, nullable=False, default=0, server_default="0"),
    Column("last_seen_at", DateTime, nullable=True),
    # false while its creation is under way (the row reserves its place in the subnet's rate)
    Column("complete", Boolean, nullable=False, default=False, server_default=false()),
    Index("di_discovered_subnet_idx", "subnet", "created_at"),
)

# MACs that never identify a machine, as discovery found them (seen on two machines) beside
# the configured ones (the operator's list and the built-in ones are not stored).
non_unique_macs = Table(
    "di_non_unique_macs", metadata,
    Column("mac", String(64), primary_key=True),
    Column("reason", String(255), nullable=False),
    Column("recorded_at", DateTime, nullable=False),
)

# The expected delivery (discoverd/manifest.py): one row per machine, by system serial; the
# node it became once it arrived.
manifest = Table(
    "di_manifest", metadata,
    Column("serial", String(255), primary_key=True),
    Column("entry", JSON, nullable=False),
    Column("imported_at", DateTime, nullable=False),
    Column("node_uuid", String(36), nullable=True),
    Column("arrived_at", DateTime, nullable=True),
)

# Fleet hardware (0010_fleet). What each inspection changed of a node's hardware
# (discoverd/components.py): one row per component added, removed or changed, kept when the
# data it was computed from is pruned.
component_events = Table(
    "di_component_events", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False),
    Column("run", Integer, nullable=False),
    Column("at", DateTime, nullable=False),
    Column("component", String(16), nullable=False),
    Column("key", String(255), nullable=False),
    Column("change", String(16), nullable=False),  # added, removed, changed
    Column("severity", String(16), nullable=False),  # critical, warning, info
    Column("before", JSON, nullable=True),
    Column("after", JSON, nullable=True),
    Column("fields", JSON, nullable=True),
    Column("message", Text, nullable=False),
    Index("di_component_events_node_idx", "uuid", "id"),
    Index("di_component_events_at_idx", "at"),
)

# The webhook outbox (discoverd/webhooks.py): one row per event and endpoint, written with
# the event, sent (and retried with backoff) by whichever replica holds its lease.
webhook_deliveries = Table(
    "di_webhook_deliveries", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=False),
    Column("event_type", String(64), nullable=False),
    Column("url", String(2048), nullable=False),
    Column("payload", JSON, nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("status", String(16), nullable=False),  # pending, delivered, failed
    Column("attempts", Integer, nullable=False, default=0, server_default="0"),
    Column("next_attempt_at", DateTime, nullable=True),
    Column("last_attempt_at", DateTime, nullable=True),
    Column("last_status_code", Integer, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("delivered_at", DateTime, nullable=True),
    Column("lease_owner", String(255), nullable=True),
    Column("lease_until", DateTime, nullable=True),
    Index("di_webhook_deliveries_due_idx", "status", "next_attempt_at"),
    Index("di_webhook_deliveries_created_idx", "created_at"),
)

# The live replicas of discoverd: each heartbeats its row; a silent one is dead, and the
# others take over the steps it was running. The PXE side's owner says so here too.
members = Table(
    "di_members", metadata,
    Column("name", String(255), primary_key=True),  # host:pid, as introspections.owner
    Column("hostname", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", DateTime, nullable=False),
    Column("heartbeat_at", DateTime, nullable=False),
    Column("pxe_network", String(255), nullable=True),  # the provisioning network it serves
    Column("pxe_since", DateTime, nullable=True),
)

# Inspection rules of both API dialects (discoverd/rule_store.py): the `dialect` a rule was
# created in decides which API lists and deletes it; processing applies all of them.
# `conditions`/`actions` hold the internal model (discoverd/rules/model.py) as JSON,
# `original` the body an inspector-dialect rule was posted with (shown back as posted).
inspection_rules = Table(
    "inspection_rules", metadata,
    Column("uuid", String(36), primary_key=True),
    Column("dialect", String(16), nullable=False),
    Column("priority", Integer, nullable=False, default=0),
    Column("description", Text, nullable=True),
    Column("phase", String(16), nullable=False, default="main"),
    Column("sensitive", Boolean, nullable=False, default=False),
    Column("scope", String(255), nullable=True),
    Column("conditions", JSON, nullable=False),
    Column("actions", JSON, nullable=False),
    Column("original", JSON, nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=True),
    # A random number drawn at every write: with the row count, the cached rule sets' version
    # stamp (rule_store.py), which timestamps alone would not be across replicas whose clocks
    # differ.
    Column("revision", Integer, nullable=False, default=0),
    Index("inspection_rules_dialect_idx", "dialect", "created_at"),
)
