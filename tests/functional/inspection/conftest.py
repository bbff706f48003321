"""In-band inspection end to end: `ironsight serve` processes (bare-metal service with
`[discoverd] enabled` + discoverd), machines played by the real agent on machine trees.

`service` (both services in one process, default periods) is shared by the whole folder:
every test uses its own nodes with unique names and MACs. Tests that need another
configuration, or that stop discoverd, start their own processes."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from .helpers import Service


@pytest.fixture(scope="package")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    svc = Service(tmp_path_factory.mktemp("inspection")).start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with service.client() as c:
        yield c
