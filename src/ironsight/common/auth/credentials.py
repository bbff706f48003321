"""What our clients send to prove who they are, and how they check the server: the same for
the CLI, discoverd's client of the bare-metal API and the conductor's client of discoverd.
Header values are built here once; no caller formats a password."""

from __future__ import annotations

import base64
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


class TokenSource(Protocol):
    """Headers asked for on every request (a Keystone token renewed before it expires);
    cheap when nothing changed."""

    async def headers(self) -> Mapping[str, str]:
        """The headers that authenticate a request (raises an IronsightError, 503, when
        none can be had)."""

    def invalidate(self) -> None:
        """Forget the token (the peer refused it); the next request gets a new one."""


@dataclass(frozen=True)
class Credentials:
    username: str = ""
    password: str = field(default="", repr=False)
    token: str = field(default="", repr=False)  # X-Auth-Token (a Keystone token)
    cafile: str = ""  # CA bundle that the server's certificate must chain to; "": the system's
    # per-request headers on top of headers() (async clients only): a service's Keystone token
    tokens: TokenSource | None = field(default=None, repr=False, compare=False)

    def headers(self) -> dict[str, str]:
        found: dict[str, str] = {}
        if self.username:
            pair = f"{self.username}:{self.password}".encode()
            found["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        if self.token:
            found["X-Auth-Token"] = self.token
        return found

    def ssl_context(self) -> ssl.SSLContext:
        """A verifying context (never an unverified one: a configured CA narrows trust)."""
        return ssl.create_default_context(cafile=self.cafile or None)
