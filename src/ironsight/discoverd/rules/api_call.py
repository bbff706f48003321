"""The `api-call` action's transport: one HTTP GET (the engine retries), with TLS verification
always on (Ironic hardened its sessions the same way in 37.0), a timeout, and a proxy chosen by
the URL's scheme. Answers are capped: a rule only needs to know that the call went through."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

import aiohttp

from ironsight.discoverd.rules.model import ApiResponse

MAX_BODY = 1024 * 1024


class HttpApiCall:
    """An `ApiCall` over one shared aiohttp session (created on first use: a session belongs
    to the running event loop)."""

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
