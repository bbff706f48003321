"""In-process calls to the bare-metal API (test_in_process.py) under http_basic: discoverd's
credentials are checked by the bare-metal application's own middleware, as over HTTP; a
wrong one is a 401, a role too low a 403."""

from __future__ import annotations

import dataclasses
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ironsight.baremetal.service import BaremetalService
from ironsight.cli.server import baremetal_in_process
from ironsight.common import config
from ironsight.common.asgi_call import AsgiCall
from ironsight.discoverd.ironic import Ironic, IronicError
from ironsight.discoverd.service import DiscoverdService

from ..api.conftest import LATEST
from ..security import auth_sections, basic, write_htpasswd
from .helpers import introspect, ipa_payload, make_node, node


@pytest.fixture
def conf_overrides(tmp_path: Path) -> dict[str, dict[str, Any]]:
    return dict(auth_sections(write_htpasswd(tmp_path / "htpasswd")))


@pytest.fixture
def conf(conf: config.Config, bm_socket: socket.socket) -> config.Config:
    return dataclasses.replace(conf, api=dataclasses.replace(
        conf.api, port=bm_socket.getsockname()[1]))


@pytest.fixture
async def di_service(conf: config.Config, bm_service: BaremetalService
                     ) -> AsyncIterator[DiscoverdService]:
    svc = DiscoverdService(conf, baremetal_in_process(conf, bm_service))
    await svc.start()
    try:
        yield svc
    finally:
        await svc.stop()


@pytest.fixture
async def bm(bm_service: BaremetalService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=bm_service.app),
                                 base_url="http://bm.test", headers=LATEST,
                                 auth=basic("admin")) as client:
        yield client


@pytest.fixture
async def di(di_service: DiscoverdService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=di_service.app),
                                 base_url="http://di.test", auth=basic("admin")) as client:
        yield client


def as_user(conf: config.Config, user: str, password: str, local: AsgiCall | None) -> Ironic:
    """discoverd's client with other credentials: in-process (`local`) or over HTTP."""
    other = dataclasses.replace(conf, introspection=dataclasses.replace(
        conf.introspection, ironic_username=user, ironic_password=password,
        ironic_retry_interval=0.01))
    return Ironic(other, local)


async def outcome(call: Any) -> tuple[int, str]:
    try:
        await call
    except IronicError as exc:
        return exc.code, str(exc)
    return 200, ""


async def test_an_inspection_end_to_end_with_discoverds_credentials(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService,
        caplog: pytest.LogCaptureFixture) -> None:
    assert di_service.ironic.local is not None
    m = await make_node(bm)
    with caplog.at_level(logging.WARNING):
        done = await introspect(di, m, ipa_payload(m, cpus=6))
    assert done["error"] is None, done
    assert (await node(bm, m.uuid))["properties"]["cpus"] == 6
    assert di_service.ironic._session is None  # no HTTP


@pytest.mark.parametrize(("user", "password", "code"), [
    ("di-svc", "wrong-password", 401),
    ("nobody", "whatever", 401),
    ("", "", 401),  # no credentials at all
    ("viewer", "viewer-pass-37b2", 403),  # a reader may not change a node
])
async def test_refusals_are_the_applications_in_process_as_over_http(
        bm: httpx.AsyncClient, conf: config.Config, di_service: DiscoverdService,
        user: str, password: str, code: int) -> None:
    m = await make_node(bm)
    local = di_service.ironic.local
    here = as_user(conf, user, password, local)
    there = as_user(conf, user, password, None)
    try:
        patch = [{"op": "add", "path": "/extra/x", "value": "1"}]
        found = [await outcome(ironic.patch_node(m.uuid, patch)) for ironic in (here, there)]
    finally:
        await there.close()
    assert found[0] == found[1]
    assert found[0][0] == code
    # the service's own credentials pass, in-process
    assert await outcome(di_service.ironic.patch_node(m.uuid, patch)) == (200, "")
    assert (await node(bm, m.uuid))["extra"] == {"x": "1"}
