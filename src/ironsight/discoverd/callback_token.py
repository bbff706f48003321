"""The per-introspection callback token: what proves that a ramdisk report comes from the
node discoverd booted for this introspection.

A token is random (`secrets.token_urlsafe(32)`: 256 bits). The database keeps only its
SHA-256, in the introspection's row: a copy of the database, a log or an API answer never
holds a usable token. It is issued when the node fetches its own boot script
(`/boot/<MAC>.ipxe`, see pxe/bootfiles.py), which puts it on the ramdisk's kernel command
line; each fetch issues a new one (the node rebooted: the previous boot is gone), and the
hash is cleared when the introspection is aborted or ends, or another one starts.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from ironsight.common.exceptions import IronsightError

# How the ramdisk sends it (the agent and /init); the bare-metal API forwards it unchanged.
HEADER = "X-Ironsight-Callback-Token"
# The kernel parameter that carries it to the ramdisk.
KERNEL_PARAM = "ironsight.callback_token"
TOKEN_BYTES = 32


class TokenRefused(IronsightError):
    """403: a report whose token does not match (or that has none, when one is required)."""

    code = 403


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def matches(stored_digest: str | None, token: str) -> bool:
    """Whether `token` is the one whose digest is stored; in constant time."""
    if not stored_digest:
        return False
    return hmac.compare_digest(stored_digest.encode(), digest(token).encode())
