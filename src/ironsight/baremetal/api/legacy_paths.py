"""The URL forms Ironic still answers that are not `/v1/...`, turned into the canonical path
before anything else (authentication, routing) sees the request.

- **No version prefix.** Ironic's root controller serves `/nodes/...`, `/ports/...`,
  `/drivers/...` (any first segment other than `v1`) as v1. Clients still build such URLs:
  openstacksdk does for a cloud whose bare-metal endpoint is the service's root URL (Bifrost's
  clouds.yaml), so every call of theirs would otherwise be a 404.
- **A trailing `.json`** (pecan's old content-type guess) is stripped when the request asks
  for a version below 1.91 with Ironic's own header, as Ironic's JsonExtensionMiddleware
  does. A read that then finds nothing is tried again with the suffix kept: a node may be
  named `web.json`.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ironsight.common.api.versions import VersionPolicy, parse

DOT_JSON_LAST_MINOR = 90  # 1.91 ended the stripping
_SUFFIX = ".json"


def canonical(path: str, keep: frozenset[str]) -> str:
    """`path` with Ironic's implicit `/v1` added; `keep` are this service's own top-level
    paths outside the API (`/metrics`; one ending in / keeps what is under it)."""
    if path in ("", "/") or path == "/v1" or path.startswith("/v1/") or path in keep:
        return path
    if any(k.endswith("/") and path.startswith(k) for k in keep):
        return path
    return "/v1" + (path if path.startswith("/") else "/" + path)


class LegacyPaths:
    def __init__(self, app: ASGIApp, versions: VersionPolicy,
                 keep: frozenset[str] = frozenset({"/metrics", "/vmedia/"})) -> None:
        self.app = app
        self.versions = versions
        self.keep = keep

    def _strips_suffix(self, scope: Scope) -> bool:
        """Only Ironic's own header counts, and only an explicit minor below 91 (Ironic looks
        at nothing else: no header, no stripping)."""
        raw = Headers(scope=scope).get(self.versions.header)
        version = parse(raw.strip()) if raw and len(raw) <= 64 else None
        return version is not None and 0 < version[1] <= DOT_JSON_LAST_MINOR

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = canonical(scope["path"], self.keep)
        trimmed = path.rstrip("/")
        if not (trimmed.endswith(_SUFFIX) and self._strips_suffix(scope)):
            await self.app(_with_path(scope, path), receive, send)
            return
        stripped = _with_path(scope, trimmed[:-len(_SUFFIX)])
        if scope["method"] not in ("GET", "HEAD"):
            await self.app(stripped, receive, send)
            return
        held = await _run_held(self.app, stripped, receive)
        if held[0]["status"] == 404:  # a resource whose name ends in .json
            await self.app(_with_path(scope, path), receive, send)
            return
        for message in held:
            await send(message)


def _with_path(scope: Scope, path: str) -> Scope:
    if path == scope["path"]:
        return scope
    return {**scope, "path": path, "raw_path": path.encode()}


async def _run_held(app: ASGIApp, scope: Scope, receive: Receive) -> list[Message]:
    """A read's whole answer, kept back (a read's answer is a bounded document)."""
    messages: list[Message] = []

    async def hold(message: Message) -> None:
        messages.append(message)

    await app(scope, receive, hold)
    return messages
