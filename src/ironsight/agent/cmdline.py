"""The kernel command line: callback URL, callback token and PXE interface (`BOOTIF`).

Keys are read in this order for the callback URL; the first one present wins and
its value may be a comma-separated list of URLs tried in order (as IPA does):
`ironsight.callback_url`, `discoverd_callback_url` (ironic-discoverd ramdisks),
`ipa-inspection-callback-url` (ironic-python-agent). IPA's special value `mdns`
is not supported and is ignored.

`ironsight.callback_token` is the token discoverd's boot script gave this boot; the agent
sends it with its report (header `X-Ironsight-Callback-Token`) and never prints it.
"""

from __future__ import annotations

import re

from .sysfs import join, read

CALLBACK_KEYS = ("ironsight.callback_url", "discoverd_callback_url",
                 "ipa-inspection-callback-url")

# A word is key=value where the value may be double-quoted, or a bare word.
TOKEN_KEY = "ironsight.callback_token"
TOKEN_HEADER = "X-Ironsight-Callback-Token"  # as discoverd's callback_token.HEADER

_WORD = re.compile(r'([^\s=]+)(?:=("[^"]*"|\S*))?')
_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


def parse(text: str) -> dict[str, str]:
    """Kernel parameters up to `--` (the rest belongs to init); the last occurrence wins."""
    params: dict[str, str] = {}
    for match in _WORD.finditer(text):
        key, value = match.group(1), match.group(2) or ""
        if key == "--" and not match.group(2):
            break
        params[key] = value[1:-1] if value.startswith('"') and value.endswith('"') else value
    return params


def read_params(root: str = "/") -> dict[str, str]:
    return parse(read(join(root, "proc/cmdline")) or "")


def callback_urls(params: dict[str, str]) -> list[str]:
    for key in CALLBACK_KEYS:
        value = params.get(key)
        if value:
            return split_urls(value)
    return []


def callback_token(params: dict[str, str]) -> str | None:
    return params.get(TOKEN_KEY) or None


def split_urls(value: str) -> list[str]:
    return [url.strip() for url in value.split(",") if url.strip() and url.strip() != "mdns"]


def bootif_mac(value: str | None) -> str | None:
    """MAC of `BOOTIF`: pxelinux/iPXE send `01-aa-bb-cc-dd-ee-ff` (01 = Ethernet)."""
    if not value:
        return None
    parts = value.strip().lower().replace(":", "-").split("-")
    if len(parts) == 7:
        parts = parts[1:]
    mac = ":".join(parts)
    return mac if _MAC.match(mac) else None
