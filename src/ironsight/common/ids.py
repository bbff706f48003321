"""UUIDs: both services name resources by UUID and accept names where Ironic does."""

from __future__ import annotations

import uuid as uuidlib


def new_uuid() -> str:
    return str(uuidlib.uuid4())


def is_uuid_like(value: str) -> bool:
    try:
        return str(uuidlib.UUID(value)) == value.lower()
    except ValueError:
        return False
