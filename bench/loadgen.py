"""A small HTTP/1.1 keep-alive load generator on raw asyncio streams.

httpx costs ~1 ms of CPU per request, as much as the server itself; on a 2-core machine the
client would then measure mostly itself. This one costs a few tens of microseconds.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Response:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self.host, self.port = host, port
        self.extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None) -> Response:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n{self.extra}"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
        self.writer.write(head.encode() + data)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        payload = await self.reader.readexactly(length) if length else b""
        return Response(status, payload)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


@dataclass
class Result:
    count: int
    seconds: float
    latencies: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.count / self.seconds

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def run(host: str, port: int, headers: dict[str, str], count: int, concurrency: int,
              make: Callable[[int], tuple[str, str, Any]],
              check: Callable[[Response], None] | None = None) -> Result:
    """Send `count` requests (`make(i)` -> method, path, body) over `concurrency` connections.

    A 503 (the conductor's worker pool is full) is retried after a short pause, as the
    OpenStack clients do (openstacksdk retries 409 and 503); the latency counts the retries.
    """
    queue = iter(range(count))
    latencies: list[float] = []

    async def worker() -> None:
        conn = Connection(host, port, headers)
        try:
            for i in queue:
                method, path, body = make(i)
                start = time.perf_counter()
                resp = await conn.request(method, path, body)
                for _ in range(100):
                    if resp.status != 503:
                        break
                    await asyncio.sleep(0.1)
                    resp = await conn.request(method, path, body)
                latencies.append(time.perf_counter() - start)
                if check is not None:
                    check(resp)
        finally:
            conn.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return Result(count, time.perf_counter() - start, latencies)
