"""`GET /v1/introspection`: newest first, paginated, filtered by state."""

from __future__ import annotations

import httpx

from .helpers import error_message, introspect, ipa_payload, make_node, start


async def test_list_newest_first_with_state_filter(bm: httpx.AsyncClient,
                                                   di: httpx.AsyncClient) -> None:
    assert (await di.get("/v1/introspection")).json() == {"introspection": []}
    done = await make_node(bm)
    await introspect(di, done, ipa_payload(done))
    waiting = await make_node(bm)
    await start(di, waiting.uuid)
    docs = (await di.get("/v1/introspection")).json()["introspection"]
    assert [d["uuid"] for d in docs] == [waiting.uuid, done.uuid]
    assert docs[0]["state"] == "waiting" and docs[1]["state"] == "finished"
    for state, expected in (("waiting", [waiting.uuid]), ("finished", [done.uuid]),
                            ("waiting,finished", [waiting.uuid, done.uuid]), ("error", [])):
        resp = await di.get("/v1/introspection", params={"state": state})
        assert [d["uuid"] for d in resp.json()["introspection"]] == expected, state


async def test_list_pages_with_limit_marker_and_next(bm: httpx.AsyncClient,
                                                     di: httpx.AsyncClient) -> None:
    machines = [await make_node(bm, nics=1) for _ in range(3)]
    for m in machines:
        resp = await di.post(f"/v1/introspection/{m.uuid}", params={"manage_boot": "false"})
        assert resp.status_code == 202
    newest_first = [m.uuid for m in reversed(machines)]
    seen: list[str] = []
    url = "/v1/introspection?limit=2"
    while url:
        body = (await di.get(url)).json()
        seen += [d["uuid"] for d in body["introspection"]]
        url = body.get("next", "").removeprefix("http://di.test")
        assert len(seen) <= 3
    assert seen == newest_first


async def test_list_unknown_marker_is_400(di: httpx.AsyncClient) -> None:
    resp = await di.get("/v1/introspection", params={"marker": "no-such-node"})
    assert resp.status_code == 400
    assert "marker" in error_message(resp)
