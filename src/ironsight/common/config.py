"""Configuration: one INI file, typed and validated at start, with embedded defaults.

Each section is a frozen dataclass; a field's metadata carries its help text (and, for secrets,
`secret=True` so that nothing prints it). The loader rejects unknown sections and options and
bad values with a message naming `[section] option`, so a typo never silently falls back to a
default.
"""

from __future__ import annotations

import configparser
import dataclasses
import os
import socket
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ironsight.common import plugins
from ironsight.common.exceptions import ConfigError

Choices = tuple[str, ...] | Callable[[], tuple[str, ...]]


# diagnosis.CODES (discoverd's; here for the options that name them, checked by a test)
FAILURE_CODES = ("BOOT_NO_DHCP", "BOOT_NO_LOADER", "BOOT_NO_SCRIPT", "BOOT_NO_KERNEL",
                 "BOOT_NO_RAMDISK", "RAMDISK_NO_HELLO", "RAMDISK_NO_REPORT", "RAMDISK_ERROR",
                 "LOOKUP_FAILED", "PROCESSING_FAILED", "RULE_FAILED", "POWER_FAILED", "ABORTED",
                 "TIMEOUT")
DEADLINE_STEPS = ("dhcp_request", "dhcp_lease", "loader_fetched", "script_fetched",
                  "kernel_fetched", "ramdisk_fetched", "hello", "report_received")
# discoverd/webhooks.py's event types (here for the option that names them)
WEBHOOK_EVENTS = ("component.added", "component.removed", "component.changed",
                  "discovery.node_created", "discovery.conflict")


def opt(default: Any, help: str, *, choices: Choices | None = None,
        minimum: float | None = None, secret: bool = False) -> Any:
    """A config option: its default and its documentation, in one place. `choices` may be
    a function, for options naming plugins (whose list is known only when they are
    installed)."""
    meta = {"help": help, "choices": choices, "minimum": minimum, "secret": secret}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


def default_state_dir() -> str:
    env = os.environ.get("IRONSIGHT_STATE_DIR")
    if env:
        return env
    return str(Path.home() / ".local" / "state" / "ironsight")


def default_ramdisk_dir() -> Path:
    """Where `ironsight ramdisk build` writes by default (and the lab takes its ramdisk)."""
    return Path(default_state_dir()) / "ramdisk"


@dataclass(frozen=True)
class DefaultSection:
    host: str = opt(socket.gethostname(),
                    "Name of this conductor's host: the hostname GET /v1/conductors lists and "
                    "nodes and drivers show; replicas sharing it are one conductor there "
                    "(node reservations name the replica, host:pid).")
    state_dir: str = opt(
        "", "Directory for the SQLite database and all other state. "
        "Empty: $IRONSIGHT_STATE_DIR, else ~/.local/state/ironsight.")
    debug: bool = opt(False, "Log at DEBUG level.")
    log_file: str = opt("", "Log to this file instead of standard error.")
    graceful_shutdown_timeout: float = opt(
        10.0, "Seconds running actions (power, verification, introspection steps) get to "
        "finish when a service stops; the rest are cancelled and resumed or recovered by the "
        "next start.", minimum=0)
    auth_strategy: str = opt(
        "noauth", "Authentication of both APIs: noauth (none: every caller is an admin; "
        "only allowed on loopback addresses unless allow_remote_noauth), http_basic (users "
        "of http_basic_auth_user_file) or keystone (X-Auth-Token validated by the Keystone of "
        "[keystone_authtoken]; the services then call each other with tokens of its service "
        "user). Their ramdisk endpoints and version documents stay open (see "
        "docs/security.md).", choices=("noauth", "http_basic", "keystone"))
    http_basic_auth_user_file: str = opt(
        "/etc/ironsight/htpasswd", "With http_basic: an Apache htpasswd file of bcrypt "
        "entries (htpasswd -B), re-read when it changes.")
    http_basic_roles: list[str] = opt(
        [], "With http_basic: each user's role, as USER:ROLE (admin: everything; member: "
        "reads and actions on nodes and ports, no deletion of nodes; reader: reads only).")
    http_basic_default_role: str = opt(
        "reader", "With http_basic: the role of a user of the file not named in "
        "http_basic_roles (none: such users are refused).",
        choices=("admin", "member", "reader", "none"))
    http_basic_projects: list[str] = opt(
        [], "With http_basic: users who act for one project, as USER:PROJECT, as a Keystone "
        "token scoped to that project does: they see and act on the nodes whose owner or "
        "lessee is PROJECT only, by Ironic's project-scoped rules. Users not named act on "
        "the whole fleet.")
    allow_remote_noauth: bool = opt(
        False, "Let the APIs listen on a non-loopback address with auth_strategy = noauth "
        "(only on a network that no untrusted host reaches).")
    secrets_key_file: str = opt(
        "", "File of Fernet keys (ironsight secrets create-key) with which the secret "
        "driver_info fields (passwords, SSH keys) are encrypted in the database; the "
        "conductor decrypts them only for driver calls. Empty: stored as given. Existing "
        "plain values are encrypted by `ironsight secrets encrypt`.")


@dataclass(frozen=True)
class ApiSection:
    host: str = opt("127.0.0.1", "Address the bare-metal API listens on.")
    port: int = opt(6385, "Port the bare-metal API listens on.", minimum=1)
    public_endpoint: str = opt(
        "", "Base URL used in links in API responses. Empty: taken from each request.")
    max_limit: int = opt(1000, "Largest number of items a list request returns.", minimum=1)
    max_body_size: int = opt(
        1048576, "Largest request body accepted, in bytes (larger: 413).", minimum=1024)
    max_json_depth: int = opt(
        25, "Deepest nesting of arrays and objects accepted in a JSON request body (deeper: "
        "400; Ironic's limit).", minimum=2)
    cert_file: str = opt("", "TLS certificate (PEM, the chain after it) of the bare-metal "
                         "API; with key_file, it serves HTTPS. Empty: HTTP.")
    key_file: str = opt("", "TLS private key (PEM) of cert_file.")
    ramdisk_host: str = opt(
        "", "Address of a second listener serving only the ramdisk's endpoints "
        "(/v1/continue_inspection, /v1/lookup, /v1/heartbeat) without authentication, for "
        "the provisioning network; several, comma-separated (e.g. an IPv4 and an IPv6 "
        "address). Empty: none (they are served on the main listener only).")
    ramdisk_port: int = opt(6386, "Port of that listener.", minimum=1)
    ramdisk_heartbeat_timeout: int = opt(
        300, "Seconds a ramdisk agent may stay silent; sent to it at lookup (Ironic's "
        "[api] ramdisk_heartbeat_timeout): it heartbeats about twice as often.", minimum=1)
    agent_lookup_window: float = opt(
        300.0, "Seconds after an inspection ends during which the node's ramdisk may still "
        "look itself up (GET /v1/lookup) and get its agent token, once per inspection; a "
        "stock IPA does so right after posting its inspection. 0: only while inspecting.",
        minimum=0)


@dataclass(frozen=True)
class DatabaseSection:
    connection: str = opt(
        "", "SQLAlchemy URL of the database, e.g. postgresql+psycopg://user@host/db. "
        "Empty: SQLite file ironsight.sqlite in the state directory.", secret=True)
    pool_size: int = opt(
        8, "Bounds the connections each service process opens to PostgreSQL: one and a half "
        "times this many (12 with the default), shared by reads, single-statement writes and "
        "transactions. They are opened as needed and kept; a request finding none free waits "
        "for one (up to 30 s, then 503).", minimum=1)
    sqlite_busy_timeout: int = opt(
        10000, "Milliseconds SQLite waits for another process's write lock.", minimum=0)


@dataclass(frozen=True)
class ConductorSection:
    enabled_hardware_types: list[str] = opt(
        ["fake-hardware", "pxe_ipmitool", "pxe_ipminative", "pxe_ssh", "redfish"],
        "Hardware types to load (`fake` is an alias of `fake-hardware`).")
    workers_pool_size: int = opt(
        300, "Long actions (power, verification, inspection start) run at once at most; "
        "beyond that the API answers 503.", minimum=1)
    heartbeat_interval: float = opt(10.0, "Seconds between conductor heartbeats.", minimum=0.1)
    heartbeat_timeout: float = opt(
        60.0, "A conductor silent for this long is dead; its node locks are released.",
        minimum=1)
    sync_power_state_interval: float = opt(
        60.0, "Seconds between power-state syncs; 0 disables the sync.", minimum=0)
    sync_power_state_batch: int = opt(
        200, "Nodes whose power state one sync pass reads at most (oldest first).", minimum=1)
    check_provision_state_interval: float = opt(
        60.0, "Seconds between checks for nodes stuck past a deadline.", minimum=0.1)
    verify_timeout: float = opt(
        300.0, "Seconds a node may stay in 'verifying' before it fails back to enroll.",
        minimum=1)
    inspect_wait_timeout: float = opt(
        1800.0, "Seconds a node may stay in 'inspecting' or 'inspect wait' before "
        "inspection fails; 0: never.", minimum=0)
    inspection_retry_codes: list[str] = opt(
        [], "Failure codes an operator takes for transient (docs/troubleshooting.md, e.g. "
        "BOOT_NO_DHCP on a network whose DHCP relays drop the first request): an inspection "
        "whose first attempt ends with one of them is started again once, automatically, "
        "before it fails. Empty (the default): never.", choices=FAILURE_CODES)
    power_state_change_timeout: float = opt(
        60.0, "Seconds to wait for a power state change to be reported by the BMC.", minimum=1)
    conductor_group: str = opt(
        "", "This replica's conductor group, as `GET /v1/conductors` shows it (Ironic's "
        "option; ironsight does not yet route nodes by group).")


@dataclass(frozen=True)
class DiscoverdSection:
    enabled: bool = opt(False, "Enable in-band inspection through discoverd.")
    service_url: str = opt(
        "", "URL of discoverd's API, e.g. http://127.0.0.1:5050/v1 (no default).")
    status_check_period: float = opt(
        0.5, "Seconds between polls of discoverd for nodes in 'inspect wait' (one batched "
        "request per 100 waiting nodes; none when no node waits).", minimum=0.1)
    busy_status_check_period: float = opt(
        0.1, "Seconds between those polls while discoverd is processing the report of a "
        "waiting node (its end is then due within moments); never longer than "
        "status_check_period.", minimum=0.05)
    start_grace_period: float = opt(
        30.0, "Seconds after a node enters 'inspect wait' during which discoverd may not "
        "know of its introspection yet (or still report the previous one); after that, a "
        "node discoverd has no record of, or whose start could not reach discoverd, is "
        "started again.", minimum=0)
    start_attempts: int = opt(
        3, "Starts of one inspection in discoverd at most (the first included) when they are "
        "lost (discoverd unreachable, or no record of it); then the inspection fails.",
        minimum=1)
    start_unreachable_timeout: float = opt(
        10.0, "Seconds a start keeps trying a discoverd that cannot be reached (a restart, a "
        "load balancer with no live replica behind it) before it counts as lost and waits "
        "for start_grace_period.", minimum=0)
    conductor_boots: bool = opt(
        True, "The conductor boots a node it hands to discoverd into the discovery ramdisk "
        "itself (boot device PXE, then reboot, under the node's lock, once discoverd has "
        "recorded the start) and powers it off when the inspection ends, as Ironic's "
        "inspector interface has done since Stein; discoverd is started with "
        "manage_boot=false and leaves power alone. false: discoverd sets the boot device, "
        "reboots and powers off through the bare-metal API (the Kilo design; six more API "
        "calls per node).")
    power_off: bool = opt(
        True, "With conductor_boots: power the node off when its inspection ends (finished, "
        "failed, aborted or timed out).")
    username: str = opt("", "User the conductor authenticates as to discoverd (HTTP Basic); "
                        "required when discoverd's auth_strategy is http_basic.")
    password: str = opt("", "That user's password.", secret=True)
    cafile: str = opt("", "CA certificates (PEM) that discoverd's HTTPS certificate is "
                      "checked against. Empty: the system's.")


@dataclass(frozen=True)
class IntrospectionSection:
    """discoverd: the introspection service."""

    enabled: bool = opt(True, "Run discoverd in `ironsight serve` (next to the bare-metal "
                        "service).")
    host: str = opt("127.0.0.1", "Address discoverd's API listens on.")
    port: int = opt(5050, "Port discoverd's API listens on.", minimum=1)
    public_endpoint: str = opt(
        "", "Base URL used in links in discoverd's responses. Empty: taken from each request.")
    connection: str = opt(
        "", "SQLAlchemy URL of discoverd's own database. Empty: SQLite file discoverd.sqlite "
        "in the state directory.", secret=True)
    ironic_url: str = opt("http://127.0.0.1:6385",
                          "URL of the bare-metal service's API that discoverd drives.")
    ironic_auth_token: str = opt("", "Token sent to the bare-metal API (X-Auth-Token), if any.",
                                 secret=True)
    ironic_username: str = opt("", "User discoverd authenticates as to the bare-metal API "
                               "(HTTP Basic); it needs role member.")
    ironic_password: str = opt("", "That user's password.", secret=True)
    ironic_cafile: str = opt("", "CA certificates (PEM) that the bare-metal API's HTTPS "
                             "certificate is checked against. Empty: the system's.")
    cert_file: str = opt("", "TLS certificate (PEM) of discoverd's API; with key_file, it "
                         "serves HTTPS. Empty: HTTP.")
    key_file: str = opt("", "TLS private key (PEM) of cert_file.")
    ramdisk_host: str = opt(
        "", "Address of a second listener serving only the ramdisk's endpoints (/v1/continue "
        "and the PXE boot files) without authentication, for the provisioning network; "
        "several, comma-separated (e.g. 10.20.0.1,fd20:20::1 for IPv4 and IPv6 nodes). "
        "Empty: none.")
    ramdisk_port: int = opt(5051, "Port of that listener.", minimum=1)
    ramdisk_url: str = opt(
        "", "Base URL that ramdisks booted without discoverd's PXE side (virtual media) post "
        "their report to (/v1/continue is appended), e.g. http://10.30.0.1:5051. Empty: "
        "[pxe] http_url.")
    rejected_history: int = opt(
        1000, "How many refused callbacks (reports and hellos that matched no introspection "
        "or several, came in the wrong state or with a bad or missing callback token) are "
        "kept, newest first, for `ironsight inspection rejected`.", minimum=1)
    timeline_history: int = opt(
        5, "How many inspection attempts' timelines (the steps seen of each boot, the result "
        "and the failure code) are kept per node, newest first.", minimum=1)
    ironic_timeout: float = opt(30.0, "Seconds one bare-metal API call may take.", minimum=0.1)
    ironic_retries: int = opt(
        12, "Attempts of a bare-metal API call that answers 409 (node locked) or 503 (busy).",
        minimum=1)
    ironic_retry_interval: float = opt(
        1.0, "Seconds before the first retry of a bare-metal API call; the wait doubles at "
        "each attempt, up to 2 s (or this value, if larger).", minimum=0)
    ironic_unreachable_timeout: float = opt(
        60.0, "Seconds a bare-metal API call keeps being retried while the API cannot be "
        "reached (refused, reset, timed out: a restart) before it fails.", minimum=0)
    timeout: float = opt(
        3600.0, "Seconds an introspection may take before it ends with 'Introspection "
        "timeout'; 0: never.", minimum=0)
    clean_up_period: float = opt(
        60.0, "Seconds between checks for timed-out introspections.", minimum=0.1)
    heartbeat_interval: float = opt(
        10.0, "Seconds between heartbeats of this discoverd replica (and checks for dead "
        "ones, whose running steps it takes over).", minimum=0.1)
    heartbeat_timeout: float = opt(
        60.0, "A replica silent for this long is dead: another takes over its running "
        "steps (a replica on this host whose process is gone is dead at once).", minimum=1)
    max_body_size: int = opt(
        1048576, "Largest request body accepted by discoverd's API, in bytes (larger: 413); "
        "the ramdisk's report has its own limit, max_callback_size.", minimum=1024)
    max_callback_size: int = opt(
        16777216, "Largest ramdisk report accepted (`/v1/continue` here, "
        "`/v1/continue_inspection` on the bare-metal API, reapplied data), in bytes, `logs` "
        "included (larger: 413; Ironic's limit).", minimum=1024)
    max_logs_size: int = opt(
        10485760, "Largest `logs` field (base64) accepted in a ramdisk report, in bytes "
        "(larger: 413).", minimum=0)
    max_json_depth: int = opt(
        25, "Deepest nesting of arrays and objects accepted in a JSON request body, the "
        "ramdisk's report included (deeper: 400; Ironic's limit).", minimum=2)
    max_limit: int = opt(1000, "Largest number of introspections a list request returns.",
                         minimum=1)
    workers_pool_size: int = opt(
        1000, "Background steps of introspections (boot, processing, power off) run at once "
        "at most; beyond that, starting an introspection answers 503.", minimum=1)
    power_off_timeout: float = opt(
        120.0, "Seconds discoverd waits for the bare-metal service to carry out a power action "
        "it asked for (the reboot into the ramdisk; the power off after processing, an abort "
        "or a timeout) before that step fails; an action that ended otherwise is asked for "
        "once more.", minimum=1)
    ramdisk_logs_dir: str = opt(
        "", "Where ramdisk logs are written (when an introspection fails, or always with "
        "always_store_ramdisk_logs). Empty: ramdisk-logs in the state directory.")
    always_store_ramdisk_logs: bool = opt(False, "Store ramdisk logs of successful runs too.")
    # --- the ramdisk side's protection (docs/security.md) ---
    allow_tokenless_reports: bool = opt(
        False, "Accept ramdisk reports that carry no callback token (stock ironic-python-agent "
        "ramdisks, nodes booted without discoverd's PXE side). Anyone who can reach "
        "/v1/continue and knows a MAC or BMC address of a node under introspection can then "
        "post its data. A report with a wrong token is refused either way, and an error "
        "report without a valid token never ends an introspection.")
    ramdisk_rate_limit: float = opt(
        60.0, "Requests per minute one source address may make to the ramdisk endpoints "
        "(/v1/continue, the bare-metal API's /v1/continue_inspection, the PXE boot scripts); "
        "beyond it: 429 with Retry-After. Counted per process (each replica counts its own). "
        "0: no limit.", minimum=0)
    ramdisk_rate_burst: int = opt(
        20, "Requests one source address may make at once before ramdisk_rate_limit applies.",
        minimum=1)
    ramdisk_rate_limit_exempt: list[str] = opt(
        ["127.0.0.0/8", "::1"], "Source addresses or networks (CIDR) the ramdisk rate limit "
        "does not apply to. Loopback by default: only this host can use it (empty it when a "
        "reverse proxy on this host forwards the provisioning network's requests).")


@dataclass(frozen=True)
class DeadlinesSection:
    """discoverd's phase deadlines (docs/inspection.md): each boot step of an attempt may take
    as long as this fleet's recent successful attempts needed for it, times `factor`."""

    enabled: bool = opt(
        True, "End an attempt whose boot step misses its learned deadline, with the step's "
        "failure code (a step with fewer than min_samples samples has none; [introspection] "
        "timeout and the bare-metal service's inspect wait timeout stay the last resort).")
    steps: list[str] = opt(
        list(DEADLINE_STEPS),
        "The steps that get deadlines (docs/inspection.md's phase names). Drop hello for "
        "ramdisks that do not say it (ironic-python-agent): their report would be held to "
        "the hello's deadline.", choices=DEADLINE_STEPS)
    factor: float = opt(3.0, "A step's deadline: its p95 times this.", minimum=1.0)
    min_seconds: float = opt(30.0, "No deadline shorter than this.", minimum=0.1)
    max_seconds: float = opt(
        1800.0, "No deadline longer than this (the bare-metal service's inspect_wait_timeout "
        "by default). Keep it well above the slowest healthy step: a step whose p95 x factor "
        "is cut here ends healthy boots that are merely slow (a server's POST can take "
        "minutes).", minimum=0.1)
    samples: int = opt(
        100, "How many of the newest successful attempts (with their timelines kept: "
        "[introspection] timeline_history per node) the deadlines are learned from.",
        minimum=1)
    min_samples: int = opt(
        5, "Samples a step needs for a deadline: fleet-wide, and per hardware model (the "
        "report's system vendor and product), whose own deadline is used where it has them.",
        minimum=1)
    check_interval: float = opt(
        5.0, "Seconds between checks of the waiting attempts against their deadlines.",
        minimum=0.1)
    learn_interval: float = opt(60.0, "Seconds between relearnings of the deadlines.",
                                minimum=0.1)

    def __post_init__(self) -> None:
        if self.min_seconds > self.max_seconds:
            raise ConfigError(f"[deadlines] min_seconds ({self.min_seconds:g}) is above "
                              f"max_seconds ({self.max_seconds:g})")


@dataclass(frozen=True)
class ProcessingSection:
    """How discoverd turns a ramdisk report into node properties and ports."""

    node_not_found_hook: str = opt(
        "", "ironic-inspector's option: `enroll` turns [auto_discovery] on, and writes a "
        "discovered machine's BMC address as driver_info ipmi_address whatever its driver, "
        "as inspector did.", choices=("", "enroll"))
    processing_hooks: list[str] = opt(
        ["ramdisk_error", "validate_interfaces", "root_disk_selection", "scheduler",
         "capabilities", "ports"], "Processing hooks, run in this order (entry points in "
        "the ironsight.processing_hooks group).")
    overwrite_existing: bool = opt(
        False, "Overwrite node properties that are already set (the design's default: only "
        "fill missing ones).")
    power_off: bool = opt(True, "Power the node off once its data is processed.")
    add_ports: str = opt("pxe", "Which NICs get a port: all, active (with an IP address), "
                         "pxe (the PXE NIC; active when unknown) or disabled.",
                         choices=("all", "active", "pxe", "disabled"))
    keep_ports: str = opt("all", "Which existing ports to keep: all, present (NICs the "
                          "ramdisk saw) or added (only the ones just added).",
                          choices=("all", "present", "added"))
    update_pxe_enabled: bool = opt(True, "Set pxe_enabled on ports from the PXE NIC.")
    store_data: bool = opt(True, "Keep the raw and processed data, readable through the API.")
    data_history: int = opt(
        10, "How many introspections' data (raw and processed) are kept per node, newest first; "
        "older ones are dropped when a new report is stored.", minimum=1)
    disk_partitioning_spacing: bool = opt(
        True, "Report local_gb one GiB below the root disk's size (room for partitioning).")
    boot_mode_capability: bool = opt(True, "Add boot_mode:<bios|uefi> to capabilities, and "
                                     "secure_boot:<true|false> when the ramdisk knows it.")
    cpu_flags: list[str] = opt(
        ["vmx:cpu_vt", "svm:cpu_vt", "aes:cpu_aes", "pse:cpu_hugepages",
         "pdpe1gb:cpu_hugepages_1g", "smx:cpu_txt"],
        "CPU flag to capability map (flag:capability), each set to true when the flag shows.")
    # The options of Ironic's inspection hooks, by Ironic's names ([inspector] there).
    cpu_capabilities: list[str] = opt(
        ["vmx:cpu_vt", "svm:cpu_vt", "aes:cpu_aes", "pse:cpu_hugepages",
         "pdpe1gb:cpu_hugepages_1g", "smx:cpu_txt"],
        "The cpu-capabilities hook's CPU flag to capability map (flag:capability), each set "
        "to true when the flag shows (Ironic's [inspector] cpu_capabilities; the "
        "capabilities hook reads cpu_flags instead).")
    physical_network_cidr_map: list[str] = opt(
        [], "The physical-network hook's map of IP networks to physical networks, "
        "CIDR:physnet (e.g. 10.10.10.0/24:physnet_a,2001:db8::/64:physnet_b): a port gets "
        "the physical network of the first network holding its NIC's IPv4, else IPv6, "
        "address (Ironic's [inspector] physical_network_cidr_map).")
    pci_device_alias: list[str] = opt(
        [], "The pci-devices hook's PCI device aliases, vendor_id:product_id:name (e.g. "
        "10de:1eb8:gpu_t4): each alias found becomes a capability name:count (Ironic's "
        "[inspector] pci_device_alias, there one JSON object per alias).")
    known_accelerators: str = opt(
        "", "The accelerators hook's YAML file of known accelerator devices "
        "(pci_devices: [{vendor_id, device_id, type, device_info}]); empty: the list "
        "ironsight ships (Ironic's [inspector] known_accelerators).")
    extra_hardware_strict: bool = opt(
        False, "The extra-hardware hook refuses the report's extra data when one record is "
        "not 4 items long, and then drops the raw data too (Ironic's [inspector] "
        "extra_hardware_strict).")


@dataclass(frozen=True)
class InspectionRulesSection:
    """Inspection rules (discoverd applies them after the processing hooks); Ironic's names."""

    built_in_rules: str = opt(
        "", "Path to a YAML file with a list of built-in inspection rules (Ironic's format). "
        "Applied with the stored rules, shown read-only by the APIs, and read again when the "
        "file changes (a file that does not parse is logged and the previous rules kept; "
        "`ironsight serve` refuses to start on one). Empty: none.")
    mask_secrets: str = opt(
        "always", "Which rules see secret values (passwords, tokens) of the inventory and "
        "plugin data: always (masked for every rule), never (no masking) or sensitive "
        "(only rules flagged sensitive see them).",
        choices=("always", "never", "sensitive"))


@dataclass(frozen=True)
class AutoDiscoverySection:
    """Machines nobody enrolled: a report that matches no node creates one (Ironic's
    section; inspector's `[processing] node_not_found_hook = enroll` turns it on too)."""

    enabled: bool = opt(
        False, "Create a node for a machine that boots the discovery ramdisk and matches no "
        "node (Ironic's option). The PXE side then admits unknown MACs, whatever "
        "[pxe_filter] deny_unknown_macs says.")
    driver: str = opt(
        "fake-hardware", "Hardware type of a discovered node that no manifest row names "
        "(Ironic's option). The reported BMC address goes into its driver's field "
        "(ipmi_address, redfish_address).")
    rate_limit: int = opt(
        60, "Nodes discovery may create per minute for one source subnet (see "
        "rate_limit_prefix_v4/v6); beyond it the report is answered 429.", minimum=1)
    rate_limit_prefix_v4: int = opt(24, "Prefix length of an IPv4 source subnet.", minimum=8)
    rate_limit_prefix_v6: int = opt(64, "Prefix length of an IPv6 source subnet.",
                                    minimum=16)
    max_pending: int = opt(
        1000, "Discovered nodes waiting for approval at most; beyond it the report is "
        "answered 429.", minimum=1)
    non_unique_macs: list[str] = opt(
        [], "MACs that never identify a machine, besides the built-in ones (02:00:00:00:00:02, "
        "the OpenBMC MAC that MAAS drops too) and any MAC seen on two machines.")
    non_unique_drivers: list[str] = opt(
        ["cdc_ether", "cdc_ncm", "rndis_host"], "NIC drivers whose MACs never identify a "
        "machine (USB and BMC virtual NICs).")
    rediscover_states: list[str] = opt(
        ["enroll"], "Provision states whose nodes' MACs the PXE filter keeps admitting while "
        "discovery is on, so that such a machine booting again refreshes its inventory "
        "(seen again). Empty: only unknown MACs and introspections.")
    probe_bmc: bool = opt(
        True, "Probe a discovered machine's reported BMC address (reachable, IPMI or "
        "Redfish, and with the manifest's credentials whether it is this machine's BMC).")
    probe_timeout: float = opt(3.0, "Seconds one BMC probe may take.", minimum=0.1)


@dataclass(frozen=True)
class PxeSection:
    """discoverd's PXE side: dnsmasq it supervises and the boot files it serves."""

    enabled: bool = opt(False, "Run dnsmasq on the provisioning network and serve the "
                        "discovery ramdisk (discoverd's PXE side).")
    interface: str = opt("", "Provisioning network interface dnsmasq binds to (required "
                         "when enabled).")
    dhcp_range: str = opt("", "dnsmasq dhcp-range for booting nodes, e.g. "
                          "10.20.0.100,10.20.0.199,255.255.255.0,10m (required when enabled).")
    http_url: str = opt("", "Base URL booting nodes reach discoverd at, e.g. "
                        "http://10.20.0.1:5050. Empty: the interface's IPv4 address and "
                        "[introspection] port.")
    ramdisk_dir: str = opt("", "Directory holding the discovery ramdisk's vmlinuz and "
                           "initramfs (ironsight ramdisk build). Empty: ramdisk in the state "
                           "directory.")
    kernel_params: str = opt("console=ttyS0,115200 ipa-collect-lldp=1",
                             "Extra kernel command line of the discovery ramdisk "
                             "(ipa-collect-lldp=1: the agent reports the switches' LLDP).")
    http_url_ipv6: str = opt(
        "", "Base URL booting nodes on IPv6 reach discoverd at, e.g. http://[fd20:20::1]:5051 "
        "(in the boot scripts and configs served to IPv6 clients, and the DHCPv6 boot file "
        "URLs). Empty: the interface's first global IPv6 address with http_url's scheme and "
        "port.")
    dhcp_range_ipv6: str = opt(
        "", "dnsmasq dhcp-range for DHCPv6 on the interface, e.g. "
        "fd20:20::100,fd20:20::1ff,slaac,64,10m (slaac: the router advertisements also let "
        "the ramdisk configure itself). Set, UEFI machines can PXE-boot over IPv6 (DHCPv6 "
        "option 59); empty: no DHCPv6.")
    loader_file_paths: list[str] = opt(
        ["undionly.kpxe:/usr/lib/ipxe/undionly.kpxe", "snponly.efi:/usr/lib/ipxe/snponly.efi",
         "bootx64.efi:/usr/lib/shim/shimx64.efi.signed",
         "grubx64.efi:/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed",
         "bootaa64.efi:/usr/lib/shim/shimaa64.efi.signed",
         "grubaa64.efi:/usr/lib/grub/arm64-efi-signed/grubnetaa64.efi.signed"],
        "The boot loaders discoverd serves (over TFTP, and over HTTP under /boot/efi/), as "
        "NAME:PATH (Ironic's option): the file PATH of this host is served as NAME. A "
        "missing file is logged at start and its machines are not served. shim loads "
        "grubx64.efi (grubaa64.efi) from the same server, so both must be served.")
    ipxe_bootfile_name: str = opt(
        "undionly.kpxe", "Loader (a NAME of loader_file_paths) that BIOS PXE ROMs (DHCP "
        "option 93 = 0, or none) get over TFTP: iPXE, which then fetches the boot script over "
        "HTTP.")
    uefi_pxe_bootfile_name: str = opt(
        "bootx64.efi", "Loader that x86-64 UEFI PXE clients (option 93 = 7 or 9, and IPv6 "
        "clients) get over TFTP. The default, Debian's shim signed by Microsoft, boots "
        "machines with Secure Boot on or off: shim -> grubx64.efi (signed by Debian) -> the "
        "signed ramdisk kernel, all over TFTP. snponly.efi (iPXE) fetches the kernel over "
        "HTTP instead, but cannot boot with Secure Boot on.")
    uefi_ipxe_bootfile_name: str = opt(
        "snponly.efi", "Loader that x86-64 UEFI HTTP-boot clients (vendor class HTTPClient) "
        "get by URL: iPXE, as Debian's signed GRUB cannot fetch over HTTP. Empty: HTTP-boot "
        "clients are not served.")
    pxe_bootfile_name_by_arch: list[str] = opt(
        ["aarch64:bootaa64.efi"], "Loaders of other architectures' UEFI PXE clients, as "
        "ARCH:NAME (Ironic's option); aarch64 is option 93 = 11. An architecture whose loader "
        "is not installed gets no boot file, and discoverd logs each such machine's MAC.")
    ipxe_binary: str = opt(
        "", "Deprecated, before UEFI support: a BIOS iPXE binary. Set, it is served as "
        "ipxe_bootfile_name in place of that loader_file_paths entry.")
    dnsmasq_path: str = opt("dnsmasq", "The dnsmasq program.")
    ping_before_offer: bool = opt(
        False, "Let dnsmasq ping an address before offering it (duplicate check; costs ~3 s "
        "per first lease). Off: the DHCP range must be reserved for discoverd.")
    network: str = opt("", "Name of the provisioning network this replica serves. Replicas "
                       "serving the same network elect one owner, which runs dnsmasq and the "
                       "PXE filter; the others stand by. Empty: the interface's name.")
    takeover_interval: float = opt(
        2.0, "Seconds between a standby replica's attempts to take the PXE side over (and "
        "the owner's checks that it still holds it): the bound on a fail-over, plus "
        "PostgreSQL's ~6 s to notice a vanished owner's connection.", minimum=0.1)
    router_advertisements: bool = opt(
        True, "Send IPv6 router advertisements on the interface (iPXE otherwise waits ~13 s "
        "for one before it boots); needs an IPv6 address on the interface.")


@dataclass(frozen=True)
class PxeFilterSection:
    """Which MACs may PXE-boot from discoverd's dnsmasq."""

    driver: str = opt("dnsmasq", "PXE filter driver (an entry point of the "
                      "ironsight.pxe_filters group): dnsmasq (a dhcp-hostsdir file per MAC), "
                      "iptables (the design's method) or noop.",
                      choices=lambda: plugins.names(plugins.PXE_FILTERS))
    deny_unknown_macs: bool = opt(
        False, "Also refuse MACs the bare-metal service does not know (default: only known "
        "MACs that are not under introspection are refused).")
    sync_period: float = opt(15.0, "Seconds between full reconciliations of the filter with "
                             "the bare-metal service's ports; 0 disables.", minimum=0)


@dataclass(frozen=True)
class IpmiSection:
    ipmitool_path: str = opt("ipmitool", "The ipmitool program.")
    command_timeout: float = opt(
        10.0, "Seconds one ipmitool / pyghmi call may take before it is killed.", minimum=0.1)
    retries: int = opt(2, "Retries of a failed IPMI call before it is reported.", minimum=0)
    retry_interval: float = opt(1.0, "Seconds between IPMI retries.", minimum=0)


@dataclass(frozen=True)
class SshSection:
    connect_timeout: float = opt(10.0, "Seconds to establish an SSH connection.", minimum=0.1)
    command_timeout: float = opt(30.0, "Seconds one remote command may take.", minimum=0.1)
    known_hosts: str = opt(
        "", "known_hosts file used to check hypervisor host keys. Empty: host keys are not "
        "checked (as Ironic's ssh driver did).")


@dataclass(frozen=True)
class RedfishSection:
    auth_type: str = opt(
        "auto", "How the redfish driver logs in to a BMC when a node's driver_info says "
        "nothing (`redfish_auth_type`): `session` (a Redfish session), `basic` (HTTP basic "
        "on every request) or `auto` (a session where the BMC offers one, else basic), as "
        "Ironic's [redfish] auth_type.", choices=("auto", "session", "basic"))
    connect_timeout: float = opt(10.0, "Seconds to connect to a BMC.", minimum=0.1)
    read_timeout: float = opt(60.0, "Seconds one BMC answer may take.", minimum=0.1)
    connection_cache_size: int = opt(
        1000, "BMC connections (and their Redfish sessions) kept for reuse, least recently "
        "used first out; 0: a new one for every call.", minimum=0)
    vmedia_url: str = opt(
        "", "Base URL the BMCs fetch virtual media from (boot_interface = "
        "redfish-virtual-media): this service's API listener, or its [api] ramdisk_host one, "
        "as the BMCs reach it, e.g. http://10.0.0.5:6385. The image path (/vmedia/...) is "
        "appended. Empty: http://[api] host:[api] port, refused when that host is a wildcard "
        "address.")
    vmedia_dir: str = opt(
        "", "Where the inspection ISO is built and cached (once per ramdisk version). Empty: "
        "vmedia in the state directory.")


@dataclass(frozen=True)
class WebhooksSection:
    """discoverd's signed webhooks (docs/fleet.md): fleet change and discovery events POSTed
    to receivers (a CMDB), from a durable outbox, retried with backoff."""

    urls: list[str] = opt(
        [], "Receivers (http or https URLs) each event is POSTed to, signed with HMAC-SHA256. "
        "Empty: no webhooks.")
    secret_file: str = opt(
        "", "File holding the HMAC key the deliveries are signed with (surrounding "
        "whitespace ignored); required with urls, checked readable and not empty at start. "
        "Its content is never logged or shown.")
    events: list[str] = opt(list(WEBHOOK_EVENTS), "Event types sent.",
                            choices=WEBHOOK_EVENTS)
    max_attempts: int = opt(
        10, "Attempts of a delivery (the first included) before it is marked failed; "
        "`ironsight webhook retry` gives a failed one another.", minimum=1)
    backoff: float = opt(
        2.0, "Seconds before the first retry of a delivery; doubled at each further one "
        "(±10 % jitter), up to max_backoff.", minimum=0.01)
    max_backoff: float = opt(3600.0, "Longest wait between two attempts, in seconds.",
                             minimum=0.01)
    timeout: float = opt(10.0, "Seconds one POST may take.", minimum=0.1)
    keep_days: int = opt(
        14, "Days delivered and failed deliveries are kept (listed by `ironsight webhook "
        "deliveries`); pending ones are kept until they end.", minimum=1)

    def __post_init__(self) -> None:
        for url in self.urls:
            try:
                parts = urlsplit(url)
                ok = parts.scheme in ("http", "https") and bool(parts.hostname)
                _ = parts.port  # a bad port raises
            except ValueError:
                ok = False
            if not ok:
                raise ConfigError(f"[webhooks] urls: {url!r} is not an http or https URL")
        if self.urls and not self.secret_file:
            raise ConfigError("[webhooks] secret_file is required when urls are set")


@dataclass(frozen=True)
class FleetSection:
    """discoverd's fleet index (docs/fleet.md): every node's document, kept in memory for
    the fleet queries, drift and export."""

    warm_at_start: bool = opt(
        False, "Build the index in the background when the service starts, so that the "
        "first fleet query after a start does not wait for it (~30 s for 10,000 nodes). It "
        "then holds the documents (~45 MiB per 1,000 nodes) whether or not anyone asks. "
        "false: built by the first query.")


@dataclass(frozen=True)
class ConsoleSection:
    """The web console (docs/ui.md): pages under /ui/ on the bare-metal API's listener."""

    enabled: bool = opt(True, "Serve the console at /ui/ on the bare-metal API's listener.")
    host: str = opt(
        "", "Address of a listener of the console's own (at /ui/ there too, with the API's "
        "TLS files), e.g. to reach it on another network than the API. Empty: the console "
        "is served on the bare-metal API's listener.")
    port: int = opt(6388, "Port of that listener.", minimum=1)
    session_key_file: str = opt(
        "", "File holding the key that signs console session cookies (created, mode 0600, "
        "when missing). Replicas behind one load balancer must share it, or a session made "
        "on one is refused by the others. Empty: <state_dir>/console-session.key.")
    session_lifetime: int = opt(
        28800, "Seconds a console session lasts after its login; then the user logs in "
        "again.", minimum=60)
    secure_cookie: str = opt(
        "auto", "Whether the session cookie is marked Secure (sent over HTTPS only). auto: "
        "Secure over HTTPS (also behind a TLS-terminating proxy that sets "
        "X-Forwarded-Proto: https) and on plain HTTP to a loopback address, which browsers "
        "treat as secure; not Secure on plain HTTP to any other address (serve the console "
        "over HTTPS there).", choices=("auto", "always", "never"))
    bulk_concurrency: int = opt(
        8, "Nodes a bulk action of the console acts on at the same time.", minimum=1)
    login_attempts_per_minute: int = opt(
        10, "Login attempts (right or wrong) one client address may make per minute, in "
        "bursts of as many; more are answered 429 until the next is allowed. Each process "
        "counts for itself; behind a proxy every client has the proxy's address. 0: no "
        "limit.", minimum=0)


@dataclass(frozen=True)
class KeystoneAuthtokenSection:
    """auth_strategy = keystone: where tokens are validated, as whom (keystonemiddleware's
    option names, as Ironic's and ironic-inspector's configurations have them)."""

    auth_url: str = opt(
        "", "Keystone's URL, e.g. http://keystone:5000 or http://keystone:5000/v3 (required "
        "with auth_strategy = keystone): the service user authenticates there.")
    www_authenticate_uri: str = opt(
        "", "Keystone's URL as clients should reach it, sent in the WWW-Authenticate header "
        "of a 401. Empty: auth_url.")
    username: str = opt(
        "", "The service user: it validates callers' tokens (it needs Keystone's `service` "
        "role, or a system-scoped reader role) and the services call each other with its "
        "tokens (it needs role member).")
    password: str = opt("", "That user's password.", secret=True)
    project_name: str = opt("service", "Project the service user's token is scoped to.")
    user_domain_name: str = opt("Default", "Domain of the service user.")
    project_domain_name: str = opt("Default", "Domain of project_name.")
    interface: str = opt(
        "public", "Which endpoint of the identity service, in Keystone's catalog, tokens are "
        "validated at.", choices=("public", "internal", "admin"))
    cafile: str = opt("", "CA certificates (PEM) that Keystone's HTTPS certificate is "
                      "checked against. Empty: the default bundle (certifi's, as requests "
                      "uses).")
    http_connect_timeout: float = opt(
        10.0, "Seconds one call to Keystone may take; beyond it (or Keystone unreachable) "
        "the API answers 503.", minimum=0.1)
    token_cache_time: int = opt(
        300, "Seconds a validated token is remembered (never past its expiry), so that a "
        "client's requests do not each ask Keystone; a revoked token keeps working this "
        "long at most. 0: ask Keystone every time.", minimum=0)
    allowed_projects: list[str] = opt(
        ["admin", "service"], "Operators' projects (names or IDs): a token scoped to one of "
        "them acts on the whole fleet, as a system-scoped token does. A token scoped to "
        "another project acts for that project only, by Ironic's project-scoped rules: it "
        "sees and acts on the nodes its project owns or leases (their `owner` or `lessee` "
        "is the project's ID), the allocations and runbooks it owns, and nothing else. "
        "Empty: only system-scoped tokens act on the whole fleet, as in Ironic.")


@dataclass(frozen=True)
class Config:
    DEFAULT: DefaultSection = field(default_factory=DefaultSection)
    api: ApiSection = field(default_factory=ApiSection)
    database: DatabaseSection = field(default_factory=DatabaseSection)
    conductor: ConductorSection = field(default_factory=ConductorSection)
    discoverd: DiscoverdSection = field(default_factory=DiscoverdSection)
    introspection: IntrospectionSection = field(default_factory=IntrospectionSection)
    processing: ProcessingSection = field(default_factory=ProcessingSection)
    deadlines: DeadlinesSection = field(default_factory=DeadlinesSection)
    inspection_rules: InspectionRulesSection = field(default_factory=InspectionRulesSection)
    auto_discovery: AutoDiscoverySection = field(default_factory=AutoDiscoverySection)
    pxe: PxeSection = field(default_factory=PxeSection)
    pxe_filter: PxeFilterSection = field(default_factory=PxeFilterSection)
    ipmi: IpmiSection = field(default_factory=IpmiSection)
    ssh: SshSection = field(default_factory=SshSection)
    redfish: RedfishSection = field(default_factory=RedfishSection)
    keystone_authtoken: KeystoneAuthtokenSection = field(
        default_factory=KeystoneAuthtokenSection)
    webhooks: WebhooksSection = field(default_factory=WebhooksSection)
    fleet: FleetSection = field(default_factory=FleetSection)
    console: ConsoleSection = field(default_factory=ConsoleSection)

    @property
    def state_dir(self) -> Path:
        return Path(self.DEFAULT.state_dir or default_state_dir()).expanduser()

    @property
    def discovery(self) -> bool:
        """Auto-discovery is on, by Ironic's option or inspector's."""
        return self.auto_discovery.enabled or self.processing.node_not_found_hook == "enroll"

    @property
    def database_url(self) -> str:
        if self.database.connection:
            return self.database.connection
        return f"sqlite:///{self.state_dir / 'ironsight.sqlite'}"

    @property
    def discoverd_database_url(self) -> str:
        if self.introspection.connection:
            return self.introspection.connection
        return f"sqlite:///{self.state_dir / 'discoverd.sqlite'}"

    @property
    def ramdisk_dir(self) -> Path:
        return Path(self.pxe.ramdisk_dir) if self.pxe.ramdisk_dir else self.state_dir / "ramdisk"

    @property
    def vmedia_dir(self) -> Path:
        return Path(self.redfish.vmedia_dir) if self.redfish.vmedia_dir else (
            self.state_dir / "vmedia")

    @property
    def ramdisk_logs_dir(self) -> Path:
        if self.introspection.ramdisk_logs_dir:
            return Path(self.introspection.ramdisk_logs_dir)
        return self.state_dir / "ramdisk-logs"


def choices_of(meta: Any) -> tuple[str, ...]:
    """The values an option accepts (empty: any)."""
    choices = meta.get("choices")
    return tuple(choices() if callable(choices) else choices or ())


def _section_types() -> dict[str, type]:
    """Section name -> its dataclass, in the order of `Config`'s fields."""
    hints = typing.get_type_hints(Config)
    return {f.name: hints[f.name] for f in dataclasses.fields(Config)}


def _convert(raw: str, annotation: Any, where: str, meta: dict[str, Any]) -> Any:
    raw = raw.strip()
    try:
        if annotation is bool:
            low = raw.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true or false")
        if annotation is int:
            value: Any = int(raw)
        elif annotation is float:
            value = float(raw)
        elif typing.get_origin(annotation) is list:
            value = [item.strip() for item in raw.split(",") if item.strip()]
        else:
            value = raw
    except ValueError as exc:
        raise ConfigError(f"{where}: bad value {raw!r}: {exc}") from None
    if meta.get("minimum") is not None and value < meta["minimum"]:
        raise ConfigError(f"{where}: {value} is below the minimum {meta['minimum']}")
    allowed = choices_of(meta)
    for item in value if isinstance(value, list) else [value]:
        if allowed and item not in allowed:
            raise ConfigError(f"{where}: {item!r} is not one of {', '.join(allowed)}")
    return value


def _build_section(cls: type, values: dict[str, str], section: str) -> Any:
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, raw in values.items():
        if key not in known:
            raise ConfigError(f"[{section}] {key}: unknown option "
                              f"(known: {', '.join(sorted(known))})")
        kwargs[key] = _convert(raw, hints[key], f"[{section}] {key}", dict(known[key].metadata))
    return cls(**kwargs)


def load(path: str | os.PathLike[str] | None = None,
         overrides: dict[str, dict[str, str]] | None = None) -> Config:
    """Read and validate a config file; no file means the embedded defaults."""
    parser = configparser.ConfigParser(default_section="\x00none", interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    if path is not None:
        try:
            with open(path, encoding="utf-8") as fh:
                parser.read_file(fh)
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
        except configparser.Error as exc:
            raise ConfigError(f"config file {path}: {exc}") from None
    for section, values in (overrides or {}).items():
        if not parser.has_section(section):
            parser.add_section(section)
        for key, value in values.items():
            parser.set(section, key, value)
    types_ = _section_types()
    built: dict[str, Any] = {}
    for section in parser.sections():
        if section not in types_:
            raise ConfigError(f"[{section}]: unknown section (known: {', '.join(types_)})")
        built[section] = _build_section(types_[section], dict(parser.items(section)), section)
    return Config(**built)


def _type_name(annotation: Any) -> str:
    if typing.get_origin(annotation) is list:
        return "list of strings, comma-separated"
    if isinstance(annotation, types.GenericAlias):
        return str(annotation)
    return getattr(annotation, "__name__", str(annotation))


def sample() -> str:
    """Every option with its type, default and help, as a commented INI file."""
    lines: list[str] = []
    for section, cls in _section_types().items():
        lines.append(f"[{section}]")
        hints = typing.get_type_hints(cls)
        defaults = cls()
        for f in dataclasses.fields(cls):
            meta = f.metadata
            lines.append(f"# {meta['help']}")
            allowed = choices_of(meta)
            extra = f" (one of: {', '.join(allowed)})" if allowed else ""
            lines.append(f"# Type: {_type_name(hints[f.name])}{extra}")
            value = getattr(defaults, f.name)
            if isinstance(value, list):
                value = ",".join(value)
            elif isinstance(value, bool):
                value = str(value).lower()
            if section == "DEFAULT" and f.name == "host":
                value = "<this machine's hostname>"
            lines.append(f"#{f.name} = {value}")
            lines.append("")
    return "\n".join(lines)
