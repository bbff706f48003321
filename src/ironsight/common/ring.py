"""Sharing periodic work between the live replicas of a service, without a coordinator.

Each replica keeps the names of the live members (from its service's heartbeat table) and
takes the items whose highest-weight member it is (rendezvous hashing): every item has one
owner, and when a member joins or dies only its own share moves. Locks still decide who may
act on an item; the share only keeps N replicas from doing the same periodic work N times.
A member that died keeps its share until the others declare it dead (heartbeat timeout):
its items are late by that much, never missed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def _weight(member: str, key: str) -> int:
    digest = hashlib.blake2b(f"{member}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class Share:
    def __init__(self, me: str) -> None:
        self.me = me
        self.members: tuple[str, ...] = (me,)

    def update(self, live: Iterable[str]) -> None:
        """The members seen alive (this one always is)."""
        self.members = tuple(sorted({*live, self.me}))

    def owner(self, key: str) -> str:
        return max(self.members, key=lambda member: _weight(member, key))

    def mine(self, key: str) -> bool:
        return len(self.members) == 1 or self.owner(key) == self.me
