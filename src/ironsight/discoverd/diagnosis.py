"""What an inspection attempt's timeline says: the phases, their order, and the failure code
of an attempt that failed or stalled, with a phrase naming where it stopped.

The phases are seen where they happen (timeline.py records them): discoverd's API (the start,
the token for virtual media, the report, the end), its dnsmasq (DHCP), its boot files (the
loader, the per-node script, the kernel and the initramfs, over HTTP or TFTP) and the ramdisk
(its hello). A stalled attempt is named after the first expected phase that never came, so
an operator reads "a DHCP lease was given at 10:02:13 but the boot loader was never fetched"
instead of a bare timeout. docs/troubleshooting.md lists every code with its causes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

# The phases, in the order a PXE boot goes through them (documented in docs/inspection.md).
STARTED = "started"                    # discoverd recorded the introspection
POWER_ON_REQUESTED = "power_on_requested"  # discoverd asked the bare-metal service
POWERED_ON = "powered_on"              # ... which carried it out
MEDIA_REQUESTED = "media_requested"    # virtual media: the conductor took the boot parameters
MEDIA_BUILT = "media_built"            # ... the node's image ready (the ISO built or current)
MEDIA_INSERTED = "media_inserted"      # ... and the BMC inserted it
DHCP_REQUEST = "dhcp_request"          # the node's DHCPDISCOVER/SOLICIT reached dnsmasq
DHCP_LEASE = "dhcp_lease"              # dnsmasq gave it an address
LOADER_FETCHED = "loader_fetched"      # a boot loader or iPXE's first script
SCRIPT_FETCHED = "script_fetched"      # the node's own boot script (iPXE) or config (GRUB)
KERNEL_FETCHED = "kernel_fetched"
RAMDISK_FETCHED = "ramdisk_fetched"
HELLO = "hello"                        # the ramdisk's agent is up, before it collects anything
REPORT_RECEIVED = "report_received"
PROCESSING_DONE = "processing_done"
POWERED_OFF = "powered_off"            # after processing (by discoverd or the conductor)
POWER_OFF_SKIPPED = "power_off_skipped"  # ... not even tried, and why (a discovered node)
MEDIA_EJECTED = "media_ejected"        # virtual media: the CD ejected at the end
FINISHED = "finished"                  # the attempt's end: its result and failure code

PHASES = (STARTED, MEDIA_REQUESTED, MEDIA_BUILT, MEDIA_INSERTED, POWER_ON_REQUESTED, POWERED_ON,
          DHCP_REQUEST, DHCP_LEASE, LOADER_FETCHED, SCRIPT_FETCHED, KERNEL_FETCHED,
          RAMDISK_FETCHED, HELLO, REPORT_RECEIVED, PROCESSING_DONE, POWERED_OFF, POWER_OFF_SKIPPED,
          MEDIA_EJECTED, FINISHED)
# The steps a bare-metal conductor that boots the node itself tells discoverd of
# (`POST /v1/phases`, for many nodes at once): its power actions and its virtual media.
CONDUCTOR_PHASES = (POWER_ON_REQUESTED, POWERED_ON, MEDIA_BUILT, MEDIA_INSERTED, POWERED_OFF,
                    MEDIA_EJECTED)

# Failure codes (docs/troubleshooting.md).
BOOT_NO_DHCP = "BOOT_NO_DHCP"
BOOT_NO_LOADER = "BOOT_NO_LOADER"
BOOT_NO_SCRIPT = "BOOT_NO_SCRIPT"
BOOT_NO_KERNEL = "BOOT_NO_KERNEL"
BOOT_NO_RAMDISK = "BOOT_NO_RAMDISK"
RAMDISK_NO_HELLO = "RAMDISK_NO_HELLO"
RAMDISK_NO_REPORT = "RAMDISK_NO_REPORT"
RAMDISK_ERROR = "RAMDISK_ERROR"
LOOKUP_FAILED = "LOOKUP_FAILED"
PROCESSING_FAILED = "PROCESSING_FAILED"
RULE_FAILED = "RULE_FAILED"
POWER_FAILED = "POWER_FAILED"
ABORTED = "ABORTED"
TIMEOUT = "TIMEOUT"
CODES = (BOOT_NO_DHCP, BOOT_NO_LOADER, BOOT_NO_SCRIPT, BOOT_NO_KERNEL, BOOT_NO_RAMDISK,
         RAMDISK_NO_HELLO, RAMDISK_NO_REPORT, RAMDISK_ERROR, LOOKUP_FAILED, PROCESSING_FAILED,
         RULE_FAILED, POWER_FAILED, ABORTED, TIMEOUT)

# Why a ramdisk's callback was refused before it changed anything (rejections.py).
LOOKUP_FAILED_REASON = "lookup_failed"  # its MACs and BMC address match no introspection
AMBIGUOUS = "ambiguous"  # ... match several equally
WRONG_STATE = "wrong_state"  # the introspection takes no report now (ended, processing)
BAD_TOKEN = "bad_token"  # a callback token that is not the attempt's
MISSING_TOKEN = "missing_token"  # none, where one is required
DISCOVERY_CONFLICT = "discovery_conflict"  # auto-discovery: known nodes match ambiguously
REASONS = (LOOKUP_FAILED_REASON, AMBIGUOUS, WRONG_STATE, BAD_TOKEN, MISSING_TOKEN,
           DISCOVERY_CONFLICT)

# A stalled PXE boot: the furthest phase reached -> (the code, what never came).
_PXE_STALLS = (
    (PROCESSING_DONE, TIMEOUT, "the introspection did not end"),
    (REPORT_RECEIVED, PROCESSING_FAILED, "its processing never ended"),
    (HELLO, RAMDISK_NO_REPORT, "the ramdisk never posted its report"),
    (RAMDISK_FETCHED, RAMDISK_NO_HELLO, "the ramdisk never said hello"),
    (KERNEL_FETCHED, BOOT_NO_RAMDISK, "the initramfs was never fetched"),
    (SCRIPT_FETCHED, BOOT_NO_KERNEL, "the kernel was never fetched"),
    (LOADER_FETCHED, BOOT_NO_SCRIPT, "the node's boot script was never fetched"),
    (DHCP_LEASE, BOOT_NO_LOADER, "the boot loader was never fetched"),
    (DHCP_REQUEST, BOOT_NO_DHCP, "no DHCP lease was given"),
    (POWERED_ON, BOOT_NO_DHCP, "no DHCP request from it was ever seen"),
    (POWER_ON_REQUESTED, POWER_FAILED, "the node never powered on"),
)
# What each phase is, in the phrase ("a DHCP lease was given at ...").
_SAID = {DHCP_REQUEST: "a DHCP request was seen", DHCP_LEASE: "a DHCP lease was given",
         LOADER_FETCHED: "the boot loader was fetched",
         SCRIPT_FETCHED: "the node's boot script was fetched",
         KERNEL_FETCHED: "the kernel was fetched", RAMDISK_FETCHED: "the initramfs was fetched",
         HELLO: "the ramdisk said hello", REPORT_RECEIVED: "the ramdisk's report arrived",
         PROCESSING_DONE: "the report was processed",
         MEDIA_REQUESTED: "the inspection ISO was requested for virtual media",
         MEDIA_BUILT: "the node's inspection ISO was ready",
         MEDIA_INSERTED: "the inspection ISO was inserted",
         STARTED: "the introspection started",
         POWER_ON_REQUESTED: "power on was requested", POWERED_ON: "the node was powered on"}


def _when(at: Any) -> str:
    if isinstance(at, dt.datetime):
        return at.strftime("%H:%M:%S")
    return str(at)[11:19] if isinstance(at, str) and len(at) >= 19 else str(at)


def stall(phases: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(code, phrase) of an attempt that stopped: named after the furthest phase it reached
    and the one that should have come next."""
    seen = {p["phase"]: p for p in phases if p.get("phase") != FINISHED}
    media = any(p in seen for p in (MEDIA_REQUESTED, MEDIA_BUILT, MEDIA_INSERTED))
    for phase, code, missing in _PXE_STALLS:
        if phase in seen:
            if media and phase in (DHCP_REQUEST, DHCP_LEASE, POWERED_ON):
                continue  # no PXE boot follows (a DHCP is the ramdisk's own): below
            return code, f"{_SAID[phase]} at {_when(seen[phase]['at'])} but {missing}"
    if media:
        last = next(p for p in (POWERED_ON, MEDIA_INSERTED, MEDIA_BUILT, MEDIA_REQUESTED)
                    if p in seen)
        return RAMDISK_NO_HELLO, (f"{_SAID[last]} at {_when(seen[last]['at'])} but the "
                                  "ramdisk never said hello")
    return BOOT_NO_DHCP, "no DHCP request from the node was ever seen"


def result_of(phases: Sequence[Mapping[str, Any]], running: bool) -> tuple[str, str | None]:
    """(result, failure code) of an attempt from its phases: `running` while discoverd
    still works on it, else its `finished` phase says."""
    end = next((p for p in reversed(phases) if p.get("phase") == FINISHED), None)
    if end is None:
        return ("running", None) if running else ("failed", stall(phases)[0])
    details = end.get("details") or {}
    if details.get("result") == "success":
        return "success", None
    return "failed", details.get("failure_code") or stall(phases)[0]


def step_durations(phases: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Seconds each step took: from the latest step before it (in the order of PHASES, each
    at its first occurrence, and not after it) to this one's first occurrence. The power on's
    confirmation is no step's start: it may come after the node's DHCP."""
    first: dict[str, dt.datetime] = {}
    for p in phases:
        at = p.get("at")
        if isinstance(at, str):
            at = dt.datetime.fromisoformat(at)
        if isinstance(at, dt.datetime) and p.get("phase") not in first:
            first[str(p.get("phase"))] = at
    found: dict[str, float] = {}
    for index, phase in enumerate(PHASES):
        if phase not in first:
            continue
        before = [first[q] for q in PHASES[:index]
                  if q in first and q != POWERED_ON and first[q] <= first[phase]]
        if before:
            found[phase] = (first[phase] - max(before)).total_seconds()
    return found
