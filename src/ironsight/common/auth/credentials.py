"""What our clients send to prove who they are, and how they check the server: the same for
the CLI, discoverd's client of the bare-metal API and the conductor's client of discoverd.
Header values are built here once; no caller formats a password."""

from __future__ import annotations

import base64
import ssl
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Credentials:
    username: str = ""
    password: str = field(default="", repr=False)
    token: str = field(default="", repr=False)  # X-Auth-Token (a Keystone token)
    cafile: str = ""  # CA bundle that the server's certificate must chain to; "": the system's

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
