"""How the console reads and acts: the bare-metal API of this very process, called in-process
as the logged-in user (its policy, validation and node history apply as to any client), and
discoverd's API through the service's own client to it (`DiscoverdProxy`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from starlette.types import ASGIApp

from ironsight.baremetal.discoverd_proxy import DiscoverdProxy, DiscoverdUnavailable
from ironsight.common.asgi_call import AsgiCall
from ironsight.common.auth.identity import Identity
from ironsight.common.auth.middleware import PRESET_IDENTITY

API_VERSION = "latest"  # every feature the API has: the console and the API ship together
TIMEOUT = 120.0
NO_DISCOVERD = ("The console reads hardware, inspections and discovery from discoverd, and this "
                "service does not know where discoverd is: set [discoverd] service_url (e.g. "
                "http://127.0.0.1:5050/v1).")


@dataclass(frozen=True)
class Reply:
    status: int
    data: Any  # the decoded JSON body (None: none, or not JSON)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def error(self) -> str:
        """The API's own words for a failure (its envelope unwrapped)."""
        return error_text(self.data) or f"HTTP {self.status}"


def error_text(data: Any) -> str | None:
    if not isinstance(data, Mapping):
        return None
    if isinstance(data.get("error_message"), str):  # Ironic's envelope: a JSON string
        try:
            fault = json.loads(data["error_message"])
        except ValueError:
            return data["error_message"]
        if isinstance(fault, Mapping):
            return str(fault.get("faultstring") or fault.get("description") or fault)
    error = data.get("error")
    if isinstance(error, Mapping) and error.get("message"):
        return str(error["message"])
    return None


def _decode(body: bytes) -> Any:
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def path_of(*parts: str) -> str:
    return "/" + "/".join(quote(p, safe="") for p in parts)


class Calls:
    """One per console: `bm` (as a user), `discoverd` (as the service)."""

    def __init__(self, api: ASGIApp, discoverd: DiscoverdProxy, *,
                 server: tuple[str, int]) -> None:
        self._api = AsgiCall(api, server=server, client=("127.0.0.1", 0))
        self._discoverd = discoverd

    async def bm(self, identity: Identity, method: str, path: str,
                 params: Mapping[str, str] | None = None, body: Any = None) -> Reply:
        """`path` quoted, from `/v1`."""
        headers = [("X-OpenStack-Ironic-API-Version", API_VERSION), ("Accept", "application/json")]
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers.append(("Content-Type", "application/json"))
        answer = await self._api.request(method, path, query=urlencode(params or {}),
                                         headers=headers, body=data, timeout=TIMEOUT,
                                         extra_scope={PRESET_IDENTITY: identity})
        return Reply(answer.status, _decode(answer.body))

    async def discoverd(self, method: str, path: str, params: Mapping[str, str] | None = None,
                        body: Any = None) -> Reply:
        """`path` quoted, relative to discoverd's `/v1`. 503 when discoverd cannot be asked
        (the page says so instead of failing)."""
        if not self._discoverd.configured:
            return Reply(503, {"error": {"message": NO_DISCOVERD}})
        try:
            answer = await self._discoverd.forward(method, path, params, body,
                                                   has_body=body is not None)
        except DiscoverdUnavailable as exc:
            why = exc.message.split(": ", 1)[-1]
            return Reply(503, {"error": {"message": (
                f"discoverd did not answer: {why}. Right after a start it builds its fleet "
                "index first (about 20 s per 10,000 nodes): reload the page then.")}})
        return Reply(answer.status, _decode(answer.body))
