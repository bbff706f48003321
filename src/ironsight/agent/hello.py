"""The agent's hello: "this node's ramdisk is up", sent before it collects anything.

discoverd records it on the node's timeline (the `hello` phase), so a ramdisk that boots but
never reports is told apart from one that never booted. It carries the NICs' MACs (for the
lookup) and the callback token (a header, as the report's). One short try per URL: a hello
that is lost or refused is logged and the agent goes on to the report, which is what counts.
Only discoverd's callback URLs (`.../v1/continue`) have a hello beside them.
"""

from __future__ import annotations

import json
import os

from . import cmdline, nics, post
from .sysfs import join, listdir, read

TIMEOUT = 5.0
ATTEMPTS = 2


def url_for(callback_url: str) -> str | None:
    """The hello URL beside a callback URL (None: not discoverd's)."""
    base, sep, query = callback_url.partition("?")
    if not base.rstrip("/").endswith("/v1/continue"):
        return None
    return base.rstrip("/").removesuffix("/continue") + "/hello" + (sep + query)


def macs(root: str = "/") -> list[str]:
    """The MACs of the device-backed interfaces, as the report lists them."""
    base = join(root, "sys/class/net")
    found = []
    for name in sorted(listdir(base)):
        if name == "lo" or not os.path.exists(os.path.join(base, name, "device")):
            continue
        mac = nics.mac_and_client_id(read(os.path.join(base, name, "address")) or "")[0]
        if mac:
            found.append(mac)
    return found


def say_hello(urls: list[str], token: str | None, root: str = "/", *,
              timeout: float = TIMEOUT, attempts: int = ATTEMPTS) -> str | None:
    """Tell the first discoverd that answers: the URL that took it, or None (logged)."""
    found = macs(root)
    if not found:
        post.log("hello not sent: no network interface with a MAC address")
        return None
    body = json.dumps({"macs": found}).encode()
    headers = {cmdline.TOKEN_HEADER: token} if token else {}
    for url in filter(None, map(url_for, urls)):
        try:
            post.post(url, body, attempts=attempts, delay=0.5, timeout=timeout,
                      headers=headers)
        except post.PostError as exc:
            post.log(f"hello: {exc}")
            continue
        post.log(f"hello sent to {url}")
        return url
    return None
