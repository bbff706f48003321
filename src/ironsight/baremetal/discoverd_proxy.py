"""The bare-metal service's passage to discoverd's API, for the endpoints that are discoverd's
(`/v1/inspection_rules`: the rules live and run in discoverd, so the bare-metal API forwards).

It reaches discoverd as the conductor's inspect interface does (`[discoverd] service_url`,
`username`/`password`, `cafile`, and the service user's Keystone token under
`auth_strategy = keystone`), with a client of its own: forwarding works whether or not
`[discoverd] enabled` turns in-band inspection on, so rules can be managed before it is.
Every failure to get an answer is a 503 that says which: not configured, or unreachable.
Like the inspect interface, it loads discoverd's client library by name (`load_client`): the
bare-metal service does not import discoverd's package.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any, Protocol

import httpx

from ironsight.baremetal.drivers.discoverd_inspect import load_client
from ironsight.common.auth.credentials import Credentials
from ironsight.common.auth.service_token import service_token
from ironsight.common.config import Config
from ironsight.common.exceptions import DriverLoadError, IronsightError

MIN_CLIENT_VERSION = (1, 1, 0)  # the first with AsyncClient.forward


class Answer(Protocol):
    """discoverd's answer as received (the client library's `RawAnswer`)."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def body(self) -> bytes: ...

    @property
    def reason(self) -> str: ...


class DiscoverdUnavailable(IronsightError):
    """discoverd cannot be asked: not configured, or no answer."""

    code = 503


class DiscoverdProxy:
    """One pooled client, created on first use in the running loop; `close` at shutdown."""

    def __init__(self, conf: Config, *, transport: httpx.AsyncBaseTransport | None = None
                 ) -> None:
        self.conf = conf
        self._transport = transport  # tests: an in-process discoverd (httpx ASGI transport)
        self._lib: ModuleType | None = None
        self._client: Any = None

    @property
    def configured(self) -> bool:
        return bool(self.conf.discoverd.service_url)

    def _library(self) -> ModuleType:
        if not self.configured:
            raise DiscoverdUnavailable(
                "Inspection rules are kept by discoverd, and this bare-metal service does not "
                "know where discoverd is: set [discoverd] service_url (e.g. "
                "http://127.0.0.1:5050/v1) in its configuration.")
        if self._lib is None:
            try:
                lib = load_client(self.conf)
            except DriverLoadError as exc:
                raise DiscoverdUnavailable(f"discoverd cannot be called: {exc}") from None
            if lib.__version_info__ < MIN_CLIENT_VERSION:
                raise DiscoverdUnavailable(
                    f"discoverd's client library is version {lib.__version__}; forwarding "
                    f"needs {'.'.join(map(str, MIN_CLIENT_VERSION))} or newer")
            self._lib = lib
        return self._lib

    def client(self) -> Any:
        """The library's AsyncClient, created on first use."""
        lib = self._library()
        if self._client is None:
            section = self.conf.discoverd
            self._client = lib.AsyncClient(
                section.service_url, transport=self._transport, credentials=Credentials(
                    section.username, section.password, cafile=section.cafile,
                    tokens=service_token(self.conf)))
        return self._client

    async def forward(self, method: str, path: str, params: Mapping[str, str] | None = None,
                      body: Any = None, *, has_body: bool = False) -> Answer:
        """discoverd's answer to the request, whatever its status (DiscoverdUnavailable
        when there is none)."""
        client = self.client()
        try:
            answer: Answer = await client.forward(method, path, params, body,
                                                  has_body=has_body)
        except self._library().ServiceUnavailable as exc:
            raise DiscoverdUnavailable(
                f"discoverd, which keeps the inspection rules, cannot be reached: "
                f"{exc.message}") from None
        return answer

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
