"""A small synchronous client of the Ironic-compatible bare-metal API.

It owns what every caller would otherwise repeat: the base URL, the microversion header,
turning error answers into one exception with a readable message (through the project's one
decoder, `ironsight.common.api.errors`), following `next` links, and turning transport
failures into a message that says which URL was unreachable. It knows nothing of click, so
it stays testable with `httpx.MockTransport` and serves the CLI, the lab and the benchmarks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

from ironsight.common.api.errors import error_message
from ironsight.common.api.pagination import next_query
from ironsight.common.auth.credentials import Credentials

IRONIC_API_VERSION = "1.115"
IRONIC_VERSION_HEADER = "X-OpenStack-Ironic-API-Version"
DEFAULT_BAREMETAL_URL = "http://127.0.0.1:6385"
DEFAULT_TIMEOUT = 30.0
SERVE_HINT = "is `ironsight serve` running?"


class ClientError(Exception):
    """Anything that makes a command fail because of the remote service."""


class ApiError(ClientError):
    """The service answered with an HTTP error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status})")
        self.status = status
        self.message = message


class ServiceUnreachable(ClientError):
    """No HTTP answer at all: refused, timed out, DNS, TLS..."""


def quote_segment(value: str) -> str:
    """Quote a user-given identifier (node name, MAC) so it stays one path segment."""
    return quote(value, safe="")


def node_path(node: str, *rest: str) -> str:
    """`/v1/nodes/NODE[/rest...]` for a node given by UUID or name."""
    return "/".join(["/v1/nodes", quote_segment(node), *rest])


def is_uuid(value: str) -> bool:
    """Whether an identifier is a UUID (else a name, which some calls must resolve first)."""
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def decode_error(response: httpx.Response) -> str:
    """The message to show for an error response, whatever shape its body has."""
    return error_message(response.content, response.reason_phrase or "no error message")


def normalize_base_url(url: str) -> str:
    """Accept `http://host:6385`, with or without a trailing `/` or `/v1`."""
    url = url.strip().rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url


class ApiClient:
    """One base URL, fixed headers and a timeout; methods return the decoded JSON body."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        unreachable_hint: str = "",
        credentials: Credentials | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.timeout = timeout
        self.unreachable_hint = unreachable_hint
        creds = credentials or Credentials()
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Accept": "application/json", **(headers or {}), **creds.headers()},
            timeout=timeout,
            transport=transport,
            verify=creds.ssl_context() if self.base_url.startswith("https:") else True,
        )

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _unreachable(self, exc: httpx.TransportError) -> ServiceUnreachable:
        if isinstance(exc, httpx.TimeoutException):
            return ServiceUnreachable(
                f"no answer from {self.base_url} within {self.timeout:g} s"
            )
        hint = f" ({self.unreachable_hint})" if self.unreachable_hint else ""
        if isinstance(exc, httpx.ConnectError):
            return ServiceUnreachable(f"cannot connect to {self.base_url}{hint}: {exc}")
        return ServiceUnreachable(f"request to {self.base_url} failed{hint}: {exc}")

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """Send one request; None for an empty body (202/204), else the decoded JSON."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = self._http.request(
                method, path, json=json_body, params=query or None
            )
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc
        if response.is_error:
            raise ApiError(response.status_code, decode_error(response))
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise ApiError(response.status_code, "the response is not JSON") from exc

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any) -> Any:
        return self.request("POST", path, json_body=body)

    def put(self, path: str, body: Any) -> Any:
        return self.request("PUT", path, json_body=body)

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, json_body=body)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def iter_collection(
        self, path: str, key: str, params: Mapping[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every item of a paginated collection, following its `next` links (their query
        only, against our own base URL: see `next_query`)."""
        base = {k: v for k, v in (params or {}).items() if v is not None}
        query: Mapping[str, Any] | None = base
        seen: set[str] = set()
        while query is not None:
            page = self.get(path, query)
            yield from page.get(key, [])
            query = next_query(page.get("next"), base, seen)


def api_answers(url: str, timeout: float = 2.0) -> bool:
    """Whether the API rooted at `url` answers its version document (a service starting up)."""
    try:
        with ApiClient(url, timeout=timeout) as api:
            api.get("/v1")
    except ClientError:
        return False
    return True


def baremetal_client(
    url: str = DEFAULT_BAREMETAL_URL,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
    version: str = IRONIC_API_VERSION,
    credentials: Credentials | None = None,
) -> ApiClient:
    """A client for the Ironic-compatible bare-metal API, at the microversion the CLI speaks
    (the lab asks for `latest`)."""
    return ApiClient(
        url,
        headers={IRONIC_VERSION_HEADER: version},
        timeout=timeout,
        transport=transport,
        unreachable_hint=SERVE_HINT,
        credentials=credentials,
    )
