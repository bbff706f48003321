"""Identifiers: both services name resources by UUID (and accept names where Ironic does),
and know machines by their MAC addresses."""

from __future__ import annotations

import re
import uuid as uuidlib

# A normalised Ethernet MAC: six lower-case hex pairs separated by colons.
MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


def new_uuid() -> str:
    return str(uuidlib.uuid4())


def is_uuid_like(value: str) -> bool:
    try:
        return str(uuidlib.UUID(value)) == value.lower()
    except ValueError:
        return False
