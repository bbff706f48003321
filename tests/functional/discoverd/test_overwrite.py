"""Existing node properties: kept by default (the design's behaviour), replaced on request."""

from __future__ import annotations

import httpx
import pytest

from .helpers import introspect, ipa_payload, make_node, node

PRESET = {"cpus": 2, "memory_mb": 1024}


async def test_existing_properties_are_not_overwritten_by_default(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties=PRESET)
    await introspect(di, m, ipa_payload(m, cpus=8, memory_mb=16384))
    props = (await node(bm, m.uuid))["properties"]
    assert props["cpus"] == 2 and props["memory_mb"] == 1024  # kept
    assert props["cpu_arch"] == "x86_64" and props["local_gb"] == 499  # filled


async def test_empty_properties_count_as_missing(bm: httpx.AsyncClient,
                                                 di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={"cpu_arch": ""})
    await introspect(di, m, ipa_payload(m))
    assert (await node(bm, m.uuid))["properties"]["cpu_arch"] == "x86_64"


@pytest.mark.discoverd_conf(processing={"overwrite_existing": "true"})
async def test_existing_properties_overwritten_with_overwrite_existing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={**PRESET, "vendor_note": "keep me"})
    await introspect(di, m, ipa_payload(m, cpus=8, memory_mb=16384))
    props = (await node(bm, m.uuid))["properties"]
    assert props["cpus"] == 8 and props["memory_mb"] == 16384
    assert props["vendor_note"] == "keep me"  # not a discovered property
