"""The caller of a request: a user and a role. The role decides what the caller may do; the
user is recorded in node history for every change the request causes.

The identity travels in a context variable, set by the authentication middleware for the
request's task. Work a request spawns (a power action, an inspection start) is a task created
from that context, so it records the same user; periodic work records none.
"""

from __future__ import annotations

import enum
from contextvars import ContextVar
from dataclasses import dataclass


class Role(enum.IntEnum):
    """Ordered: each role may do what the ones below it may."""

    READER = 1  # reads only
    MEMBER = 2  # reads, and actions on nodes and ports; no deletion of nodes
    ADMIN = 3  # everything

    @classmethod
    def named(cls, name: str) -> Role:
        return cls[name.upper()]


ROLE_NAMES = tuple(role.name.lower() for role in Role)


@dataclass(frozen=True)
class Identity:
    user: str | None  # None: noauth (nobody was asked who they are)
    role: Role
    # the project the caller acts for, as Ironic's project-scoped tokens do: it sees and acts
    # on what its project owns or leases (see baremetal/api/project_scope.py); None: the
    # caller acts on the whole fleet (a system-scoped token, one of an operators' project)
    project: str | None = None


ANONYMOUS_ADMIN = Identity(None, Role.ADMIN)  # noauth: every caller may do everything

_ACTING: ContextVar[Identity | None] = ContextVar("ironsight_acting_identity", default=None)


def acting_user() -> str | None:
    """The authenticated user the current work is done for (None: noauth, or periodic)."""
    identity = _ACTING.get()
    return identity.user if identity is not None else None


def act_as(identity: Identity) -> None:
    """Make `identity` the caller for the rest of the current task (and tasks it creates)."""
    _ACTING.set(identity)
