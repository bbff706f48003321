"""Who gets a callback token from the node's boot script: only the address that holds the
DHCP lease of a MAC under introspection, on the replica that serves DHCP. A real node cache
(SQLite), a real dnsmasq lease file, and the boot-script route over ASGI."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from ironsight.discoverd import callback_token
from ironsight.discoverd.node_cache import NodeCache
from ironsight.discoverd.pxe.bootfiles import BootFiles
from ironsight.discoverd.pxe.tokens import LEASE_CHECKS, BootTokens

MAC = "52:54:00:aa:bb:01"
OTHER_MAC = "52:54:00:aa:bb:02"
UUID = "11111111-1111-4111-8111-111111111111"
NODE_IP = "10.20.0.105"
URL = "http://10.20.0.1:5050"


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def leases(tmp_path: Path) -> Path:
    path = tmp_path / "dnsmasq.leases"
    path.write_text(f"1900000000 {MAC} {NODE_IP} * 01:{MAC}\n"
                    f"1900000000 {OTHER_MAC} 10.20.0.106 * *\n")
    return path


@pytest.fixture
async def waiting(cache: NodeCache) -> NodeCache:
    await cache.start(UUID, manage_boot=False, macs=[MAC], bmc_addresses=[])
    return cache


def tokens(cache: NodeCache, leases: Path | None, sleeps: Sleeps | None = None) -> BootTokens:
    return BootTokens(cache, lambda: leases, sleep=Sleeps() if sleeps is None else sleeps)


async def test_the_lease_holder_gets_a_token_whose_digest_is_stored(
        waiting: NodeCache, leases: Path) -> None:
    token = await tokens(waiting, leases)(MAC, NODE_IP)
    assert token is not None
    assert callback_token.matches(await waiting.callback_token_hash(UUID), token)


async def test_ipv4_mapped_source_address_is_the_lease_holder(
        waiting: NodeCache, leases: Path) -> None:
    assert await tokens(waiting, leases)(MAC, f"::ffff:{NODE_IP}") is not None


async def test_another_address_gets_no_token_and_it_is_logged(
        waiting: NodeCache, leases: Path, caplog: pytest.LogCaptureFixture) -> None:
    sleeps = Sleeps()
    assert await tokens(waiting, leases, sleeps)("52:54:00:aa:bb:01", "10.20.0.106") is None
    assert await waiting.callback_token_hash(UUID) is None
    assert len(sleeps) == LEASE_CHECKS - 1  # the lease was looked for again, ~1 s
    assert "dnsmasq leased that MAC 10.20.0.105" in caplog.text


async def test_a_lease_written_just_after_the_request_still_counts(
        waiting: NodeCache, tmp_path: Path) -> None:
    path = tmp_path / "dnsmasq.leases"

    class WritesTheLease(Sleeps):
        async def __call__(self, seconds: float) -> None:
            path.write_text(f"1900000000 {MAC} {NODE_IP} * *\n")

    assert await BootTokens(waiting, lambda: path, sleep=WritesTheLease())(MAC, NODE_IP)


async def test_a_replica_that_does_not_serve_dhcp_hands_out_no_token(
        waiting: NodeCache, caplog: pytest.LogCaptureFixture) -> None:
    assert await tokens(waiting, None)(MAC, NODE_IP) is None
    assert "does not serve the provisioning network's DHCP" in caplog.text


async def test_a_mac_not_under_introspection_gets_no_token(
        waiting: NodeCache, leases: Path) -> None:
    assert await tokens(waiting, leases)(OTHER_MAC, "10.20.0.106") is None


async def test_no_token_once_the_ramdisk_has_reported(waiting: NodeCache, leases: Path) -> None:
    await waiting.transition(UUID, "process", owner=waiting.owner)
    assert await tokens(waiting, leases)(MAC, NODE_IP) is None


async def test_each_boot_gets_a_new_token_and_the_previous_one_dies(
        waiting: NodeCache, leases: Path) -> None:
    source = tokens(waiting, leases)
    first, second = await source(MAC, NODE_IP), await source(MAC, NODE_IP)
    assert first and second and first != second
    stored = await waiting.callback_token_hash(UUID)
    assert callback_token.matches(stored, second)
    assert not callback_token.matches(stored, first)


async def test_node_script_over_http_carries_the_token_only_for_the_lease_holder(
        waiting: NodeCache, leases: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    boot = BootFiles(leases.parent, "quiet", lambda: URL, tokens=tokens(waiting, leases))
    app = Starlette(routes=boot.routes())

    async def script(client_ip: str) -> str:
        transport = httpx.ASGITransport(app=app, client=(client_ip, 40000))
        async with httpx.AsyncClient(transport=transport, base_url=URL) as client:
            resp = await client.get("/boot/52-54-00-aa-bb-01.ipxe")
        assert resp.status_code == 200
        assert resp.headers["cache-control"] == "no-store"
        return resp.text

    mine = await script(NODE_IP)
    token = mine.split("ironsight.callback_token=")[1].split()[0]
    assert callback_token.matches(await waiting.callback_token_hash(UUID), token)
    assert f"ironsight.callback_url={URL}/v1/continue ironsight.callback_token=" in mine
    stolen = await script("10.20.0.106")
    assert "callback_token" not in stolen
    assert token not in caplog.text


async def test_an_ipv6_client_with_a_mac_based_duid_is_the_lease_holder(
        waiting: NodeCache, tmp_path: Path) -> None:
    path = tmp_path / "dnsmasq.leases"
    path.write_text(f"1900000000 7 fd20::10a * 00:03:00:01:{MAC}\n")
    assert await tokens(waiting, path)(MAC, "fd20::10a") is not None


async def test_an_ipv6_client_without_such_a_lease_is_known_by_the_neighbour_table(
        waiting: NodeCache, tmp_path: Path) -> None:
    """UEFI firmware sends a DUID-UUID and releases its lease before it runs the loader."""
    path = tmp_path / "dnsmasq.leases"
    path.write_text("1900000000 7 fd20::11b * 00:04:ef:a1:df:9b:b7:11:55:35:bf:79:d7:38:6f\n")
    asked: list[str] = []

    async def neighbour(address: str) -> str | None:
        asked.append(address)
        return MAC if address == "fd20::10a" else OTHER_MAC

    source = BootTokens(waiting, lambda: path, sleep=Sleeps(), neighbour=neighbour)
    assert await source(MAC, "fd20::10a") is not None
    assert await source(MAC, "fd20::10b") is None  # another machine's address
    assert asked[0] == "fd20::10a"


async def test_the_neighbour_table_is_not_asked_about_ipv4_clients(
        waiting: NodeCache, leases: Path) -> None:
    async def neighbour(address: str) -> str | None:
        raise AssertionError("asked")

    source = BootTokens(waiting, lambda: leases, sleep=Sleeps(), neighbour=neighbour)
    assert await source(MAC, "10.20.0.106") is None
