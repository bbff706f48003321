"""Fakes the clients' unit tests share (CLI, operator client, waits).

`FakeService` answers (method, path) from per-route queues, the last answer repeating, and
records every request, so a test states what the service says and then what the client
sent. `FakeClock` only moves when a wait sleeps, so no test sleeps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

Handler = Callable[[httpx.Request], httpx.Response]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


class FakeService:
    """Routes on the decoded path; `not_found` answers a request no route matches."""

    def __init__(self, not_found: Callable[[str], httpx.Response]) -> None:
        self.not_found = not_found
        self.routes: dict[tuple[str, str], list[httpx.Response | Handler]] = {}
        self.requests: list[httpx.Request] = []

    def add(self, method: str, path: str, *answers: httpx.Response | Handler) -> None:
        self.routes[(method, path)] = list(answers)

    def json(self, method: str, path: str, *bodies: Any, status: int = 200) -> None:
        self.add(method, path, *(httpx.Response(status, json=b) for b in bodies))

    def accept(self, method: str, path: str) -> None:
        self.add(method, path, httpx.Response(202))

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        queue = self.routes.get((request.method, request.url.path))
        if not queue:
            return self.not_found(f"No route {request.method} {request.url.path}")
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        return answer(request) if callable(answer) else answer

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)

    def sent(self, method: str | None = None, path: str | None = None) -> list[httpx.Request]:
        return [r for r in self.requests
                if (method is None or r.method == method) and (path is None or r.url.path == path)]

    def body(self, method: str, path: str) -> Any:
        (request,) = self.sent(method, path)
        return json.loads(request.content)


def ironic_error(status: int, faultstring: str) -> httpx.Response:
    """An error the way Ironic sends it: the fault JSON-encoded inside `error_message`."""
    fault = {"faultstring": faultstring, "faultcode": "Client", "debuginfo": None}
    return httpx.Response(status, json={"error_message": json.dumps(fault)})


def inspector_error(status: int, message: str) -> httpx.Response:
    """An error the way ironic-inspector (and discoverd) sends it."""
    return httpx.Response(status, json={"error": {"message": message}})


def fake_baremetal() -> FakeService:
    return FakeService(lambda message: ironic_error(404, message))


def fake_discoverd() -> FakeService:
    return FakeService(lambda message: inspector_error(404, message))
