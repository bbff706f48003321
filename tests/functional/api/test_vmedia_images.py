"""`GET|HEAD /vmedia/{node}/{image}.iso`: a node's published image, as its BMC fetches it.

The service runs with http_basic authentication: a BMC has no credentials of ours, so the
route must be open (the image's random name admits the request). The ISO is a small file of
the test's own; the conductor's VirtualMedia publishes the node's block into it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from ironsight.baremetal.service import BaremetalService
from ironsight.ramdisk.iso import PARAMS_SIZE, BootIso, params_block, placeholder

from ..security import write_htpasswd

UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
PARAMS = "ironsight.callback_url=http://10.0.0.1:5051/v1/continue ironsight.callback_token=T0K"
SIZE = PARAMS_SIZE * 5
OFFSET = PARAMS_SIZE * 2


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'bm.sqlite'}"  # the route reads no table


@pytest.fixture
def conf_overrides(tmp_path: Path) -> dict[str, dict[str, str]]:
    htpasswd = write_htpasswd(tmp_path / "htpasswd", {"admin": ("secret", "admin")})
    return {"DEFAULT": {"auth_strategy": "http_basic",
                        "http_basic_auth_user_file": str(htpasswd)},
            "redfish": {"vmedia_url": "http://192.0.2.5:6385"}}


@pytest.fixture
def original(tmp_path: Path) -> bytes:
    """Bytes of the ISO's own, and its placeholder where the parameters go."""
    data = bytearray(i % 251 for i in range(SIZE))
    data[OFFSET:OFFSET + PARAMS_SIZE] = placeholder(b"test")
    return bytes(data)


@pytest.fixture
async def url(service: BaremetalService, tmp_path: Path, original: bytes) -> str:
    path = tmp_path / "inspection.iso"
    path.write_bytes(original)
    iso = BootIso(path=path, params_offset=OFFSET, params_size=PARAMS_SIZE, ramdisk_hash="x")
    service.conductor.media.build = lambda *a, **k: iso
    published = await service.conductor.media.publish(UUID, PARAMS)
    return published.removeprefix("http://192.0.2.5:6385")


@pytest.fixture
async def bmc(service: BaremetalService) -> AsyncIterator[httpx.AsyncClient]:
    """Anonymous, as a BMC."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app),
                                 base_url="http://bm.test") as client:
        yield client


def expected(original: bytes) -> bytes:
    return original[:OFFSET] + params_block(PARAMS) + original[OFFSET + PARAMS_SIZE:]


async def test_the_image_is_the_iso_with_the_nodes_block_in_place(
        bmc: httpx.AsyncClient, url: str, original: bytes) -> None:
    answer = await bmc.get(url)
    assert answer.status_code == 200
    assert answer.content == expected(original)
    assert answer.headers["content-length"] == str(SIZE)
    assert answer.headers["accept-ranges"] == "bytes"
    assert answer.headers["cache-control"] == "no-store"


async def test_the_published_url_names_the_node_and_a_random_image(url: str) -> None:
    node, name = url.removeprefix("/vmedia/").removesuffix(".iso").split("/")
    assert node == UUID and len(name) >= 43


async def test_a_range_across_the_block_is_served_patched(
        bmc: httpx.AsyncClient, url: str, original: bytes) -> None:
    start, end = OFFSET - 10, OFFSET + 99
    answer = await bmc.get(url, headers={"Range": f"bytes={start}-{end}"})
    assert answer.status_code == 206
    assert answer.content == expected(original)[start:end + 1]
    assert answer.headers["content-range"] == f"bytes {start}-{end}/{SIZE}"


async def test_a_suffix_range_is_the_last_bytes(bmc: httpx.AsyncClient, url: str,
                                                original: bytes) -> None:
    answer = await bmc.get(url, headers={"Range": "bytes=-100"})
    assert answer.status_code == 206 and answer.content == original[-100:]


async def test_an_open_range_runs_to_the_end(bmc: httpx.AsyncClient, url: str,
                                             original: bytes) -> None:
    answer = await bmc.get(url, headers={"Range": f"bytes={SIZE - 5}-"})
    assert answer.content == original[-5:]


async def test_a_range_past_the_end_is_416(bmc: httpx.AsyncClient, url: str) -> None:
    answer = await bmc.get(url, headers={"Range": f"bytes={SIZE}-"})
    assert answer.status_code == 416
    assert answer.headers["content-range"] == f"bytes */{SIZE}"


async def test_head_gives_the_size_without_a_body(bmc: httpx.AsyncClient, url: str) -> None:
    answer = await bmc.head(url)
    assert answer.status_code == 200 and answer.headers["content-length"] == str(SIZE)
    assert answer.content == b""


async def test_another_image_name_is_404(bmc: httpx.AsyncClient, url: str) -> None:
    answer = await bmc.get(f"/vmedia/{UUID}/{'A' * 43}.iso")
    assert answer.status_code == 404
    assert "No such image" in answer.text and "T0K" not in answer.text


async def test_another_node_is_404(bmc: httpx.AsyncClient, url: str) -> None:
    name = url.rsplit("/", 1)[1]
    answer = await bmc.get(f"/vmedia/00000000-0000-0000-0000-000000000000/{name}")
    assert answer.status_code == 404


async def test_a_withdrawn_image_is_404(bmc: httpx.AsyncClient, url: str,
                                        service: BaremetalService) -> None:
    service.conductor.media.withdraw(UUID)
    assert (await bmc.get(url)).status_code == 404


@pytest.mark.parametrize("path", ["/vmedia/not-a-uuid/xxxxxxxxxxxxxxxxxxxx.iso",
                                  f"/vmedia/{UUID}/short.iso",
                                  f"/vmedia/{UUID}/{'x' * 200}.iso"])
async def test_malformed_image_paths_are_404(bmc: httpx.AsyncClient, url: str,
                                             path: str) -> None:
    assert (await bmc.get(path)).status_code == 404


@pytest.mark.parametrize("path", [f"/vmedia/{UUID}/..%2F..%2Fetc%2Fpasswd.iso",
                                  f"/vmedia/{UUID}/x/y.iso", "/vmedia/"])
async def test_paths_that_are_not_an_image_are_not_open(bmc: httpx.AsyncClient, url: str,
                                                        path: str) -> None:
    assert (await bmc.get(path)).status_code == 401


async def test_only_reads_are_open(bmc: httpx.AsyncClient, url: str) -> None:
    assert (await bmc.post(url)).status_code == 401


async def test_the_api_itself_still_wants_credentials(bmc: httpx.AsyncClient,
                                                      url: str) -> None:
    assert (await bmc.get("/v1/nodes")).status_code == 401
