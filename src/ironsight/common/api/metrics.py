"""Prometheus metrics of one service, served on `GET /metrics` (text format 0.0.4).

Each service has a registry of its own (two services in one process, or many test services,
never share one). Every request through the endpoint wrapper is timed, by method, endpoint
and status. What lives in the database or in the service's objects (nodes by state, PXE
ownership, live replicas...) is read when Prometheus scrapes, by the service's own
`on_scrape` functions, so nothing on the hot path keeps them up to date.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Request and step durations, in seconds: from a cached GET to a slow BMC or ramdisk.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
           300, 900, 1800, 3600)


class _Counts(Collector):
    """Counters whose value the service keeps itself (a plain int, or one per label values):
    read at each scrape."""

    def __init__(self) -> None:
        self.counters: list[tuple[str, str, Callable[[], float]]] = []
        self.labelled: list[tuple[str, str, Sequence[str],
                                  Callable[[], Mapping[tuple[str, ...], float]]]] = []

    def collect(self) -> Iterable[Metric]:
        for name, doc, read in self.counters:
            family = CounterMetricFamily(name, doc)
            family.add_metric([], read())
            yield family
        for name, doc, labels, read_all in self.labelled:
            family = CounterMetricFamily(name, doc, labels=list(labels))
            for values, value in sorted(read_all().items()):
                family.add_metric(list(values), value)
            yield family


class Metrics:
    def __init__(self, service: str) -> None:
        self.service = service
        self.registry = CollectorRegistry()
        self.requests = Histogram(
            "ironsight_api_request_seconds", "API requests by method, endpoint and status.",
            ["service", "method", "endpoint", "status"], buckets=BUCKETS,
            registry=self.registry)
        self._counts = _Counts()
        self.registry.register(self._counts)
        self._scrape: list[Callable[[], Awaitable[None]]] = []

    def observe_request(self, method: str, endpoint: str, status: int, seconds: float) -> None:
        self.requests.labels(self.service, method, endpoint, str(status)).observe(seconds)

    def gauge(self, name: str, doc: str, labels: Sequence[str] = ()) -> Gauge:
        return Gauge(name, doc, list(labels), registry=self.registry)

    def histogram(self, name: str, doc: str, labels: Sequence[str] = ()) -> Histogram:
        return Histogram(name, doc, list(labels), buckets=BUCKETS, registry=self.registry)

    def counter(self, name: str, doc: str, read: Callable[[], float]) -> None:
        """A counter the service counts itself; `name` without the `_total` suffix."""
        self._counts.counters.append((name, doc, read))

    def counters(self, name: str, doc: str, labels: Sequence[str],
                 read: Callable[[], Mapping[tuple[str, ...], float]]) -> None:
        """Counters the service counts itself, by label values (`read`: values -> count)."""
        self._counts.labelled.append((name, doc, labels, read))

    def on_scrape(self, refresh: Callable[[], Awaitable[None]]) -> None:
        self._scrape.append(refresh)

    async def render(self) -> bytes:
        for refresh in self._scrape:
            await refresh()
        return bytes(generate_latest(self.registry))


def set_by_label(gauge: Gauge, counts: dict[Any, float], known: Iterable[Any] = ()) -> None:
    """A labelled gauge set from `counts`, the `known` labels absent from it at 0."""
    for label in {*known, *counts}:
        gauge.labels(str(label)).set(counts.get(label, 0))
