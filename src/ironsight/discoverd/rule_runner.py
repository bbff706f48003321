"""Running the rules inside discoverd: the current rule set, the facts a processing run (or a
dry run) gives them, the `api-call` action's HTTP transport, and the one-line summary the
node's history gets.

The engine (rules/engine.py) is pure; this module is what ties it to discoverd: which rules apply
(stored and built-in, cached, see rule_store.RuleSet), the `[inspection_rules] mask_secrets`
policy, and the `api-call` transport.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from ironsight.common.config import Config
from ironsight.discoverd.rule_store import RuleSet
from ironsight.discoverd.rules.engine import apply_rules
from ironsight.discoverd.rules.model import ApiCall, ApiResponse, Facts, MaskPolicy, Outcome, Rule

LOG = logging.getLogger(__name__)
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "critical": logging.CRITICAL}
MAX_SUMMARY = 4000
MAX_BODY = 1024 * 1024


class HttpApiCall:
    """The `api-call` action's transport: one GET (the engine retries), TLS verification
    always on (as Ironic's hardened sessions since 37.0), a timeout, a proxy chosen by the
    URL's scheme, the answer capped at MAX_BODY (a rule only needs to know the call went
    through). One shared aiohttp session, created on first use (a session belongs to the
    running event loop)."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=16, ssl=True))
        return self._session

    async def __call__(self, url: str, headers: Mapping[str, str], proxies: Mapping[str, str],
                       timeout: float) -> ApiResponse:
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            raise OSError(f"api-call: unsupported URL scheme {scheme!r} (http or https)")
        proxy = proxies.get(scheme) or proxies.get("all")
        try:
            async with self._http().get(
                    url, headers=dict(headers), proxy=proxy, allow_redirects=True,
                    timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                body = await resp.content.read(MAX_BODY)
                return ApiResponse(status=resp.status, body=body)
        except aiohttp.ClientError as exc:
            raise OSError(f"api-call to {url} failed: {exc or type(exc).__name__}") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


class RuleRunner:
    """The rules processing applies, and how it applies them."""

    def __init__(self, conf: Config, rules: RuleSet, api_call: ApiCall | None = None) -> None:
        self.rules = rules
        self.mask = MaskPolicy(conf.inspection_rules.mask_secrets)
        self.api_call: ApiCall = api_call if api_call is not None else HttpApiCall()

    async def current(self) -> list[Rule]:
        return await self.rules.current()

    async def run(self, rules: Sequence[Rule], facts: Facts, *, node_uuid: str,
                  live: bool = True, compact: bool = False) -> Outcome:
        """Apply `rules`; `live` False (a dry run): no `api-call` is made. `compact`: traces
        of the rules that did not match in short (see RuleTrace)."""
        outcome = await apply_rules(rules, facts, mask=self.mask,
                                    api_call=self.api_call if live else None, compact=compact)
        if live:
            for entry in outcome.logs:
                LOG.log(_LEVELS.get(entry.level.lower(), logging.INFO),
                        "Node %s: inspection rule %s: %s", node_uuid, entry.rule, entry.message)
        return outcome

    async def close(self) -> None:
        if isinstance(self.api_call, HttpApiCall):
            await self.api_call.close()


def with_properties(node: Mapping[str, Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    """The node JSON as it will be once the hooks' property changes are applied: a new
    top-level object and `properties`, sharing the rest with `node` (the engine reads its
    facts and works on its own deep copy: a second one here cost as much again)."""
    merged = dict(node)
    merged["properties"] = {**(merged.get("properties") or {}), **properties}
    return merged


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def patched(doc: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`doc` with JSON patch `ops` (add, replace, remove; the ops processing hooks emit)
    applied, for the facts rules see. Ops whose parent path is missing are skipped: the
    bare-metal API is the judge of them."""
    result = copy.deepcopy(dict(doc))
    for op in ops:
        parts = [_unescape(p) for p in str(op.get("path", "")).split("/")[1:]]
        if not parts:
            continue
        parent: Any = result
        for part in parts[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue
        if op.get("op") == "remove":
            parent.pop(parts[-1], None)
        else:
            parent[parts[-1]] = copy.deepcopy(op.get("value"))
    return result


def _change(change: Mapping[str, Any]) -> str:
    """A change as the history shows it: the path, and for traits the trait's name (a name,
    never a secret; a sensitive rule's is masked already)."""
    op, path = change.get("op", "?"), str(change.get("path", ""))
    if path.startswith("/traits") and "value" in change:
        return f"{op} trait {change['value']}"
    return f"{op} {path}".strip()


def summary(outcome: Outcome) -> str | None:
    """The node history's event: which rules matched and what each changed (paths, and
    trait names: other values may be secrets); None when no rule matched."""
    parts = []
    for trace in outcome.traces:
        if not trace.matched:
            continue
        name = f"{trace.description!r} ({trace.uuid})" if trace.description else trace.uuid
        changes = [_change(c) for action in trace.actions for c in action.changes]
        parts.append(f"{name}: {', '.join(changes) if changes else 'no change'}")
    if not parts:
        return None
    text = "Inspection rules matched: " + "; ".join(parts)
    if outcome.failure:
        text += f". Failed: {outcome.failure}"
    return text if len(text) <= MAX_SUMMARY else text[:MAX_SUMMARY - 3] + "..."
