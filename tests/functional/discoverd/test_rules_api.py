"""discoverd's inspection rules APIs over its real app and database: Ironic's dialect
(`/v1/inspection_rules`) and ironic-inspector's (`/v1/rules`), each with upstream's shapes
and codes, and what ironsight adds (built-in rules shown read-only, warnings, the dry run).
Bad input is a 400 naming the field, with nothing stored."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .conftest import BOTH_DBS
from .helpers import error_message, introspect, ipa_payload, make_node, node

RULES = "/v1/inspection_rules"
TRAIT_RULE = {"description": "big", "priority": 10,
              "conditions": [{"op": "gt", "args": {
                  "values": ["{inventory[memory][physical_mb]}", 4096]}}],
              "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_BIG"}}]}
async def create(di: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    resp = await di.post(RULES, json=body)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


async def stored_uuids(di: httpx.AsyncClient) -> list[str]:
    resp = await di.get(RULES)
    assert resp.status_code == 200, resp.text
    return [r["uuid"] for r in resp.json()["inspection_rules"]]


# --- Ironic's dialect ---------------------------------------------------------------------


@BOTH_DBS
async def test_create_answers_201_with_location_and_the_full_rule(di: httpx.AsyncClient
                                                                   ) -> None:
    resp = await di.post(RULES, json=TRAIT_RULE)
    assert resp.status_code == 201, resp.text
    doc = resp.json()
    assert resp.headers["Location"] == f"http://di.test{RULES}/{doc['uuid']}"
    assert set(doc) == {"uuid", "description", "priority", "sensitive", "phase", "conditions",
                        "actions", "created_at", "updated_at", "links", "built_in"}
    assert (doc["priority"], doc["phase"], doc["sensitive"], doc["built_in"]) == (
        10, "main", False, False)
    assert doc["actions"] == [{"op": "add-trait", "args": {"name": "CUSTOM_BIG"}}]
    assert doc["links"][0] == {"href": f"http://di.test{RULES}/{doc['uuid']}", "rel": "self"}
    assert (await di.get(f"{RULES}/{doc['uuid']}")).json() == doc


async def test_the_list_shows_the_default_fields_and_detail_shows_all(di: httpx.AsyncClient
                                                                      ) -> None:
    doc = await create(di, TRAIT_RULE)
    [item] = (await di.get(RULES)).json()["inspection_rules"]
    assert set(item) == {"uuid", "priority", "phase", "description", "links"}
    [full] = (await di.get(RULES, params={"detail": "true"})).json()["inspection_rules"]
    assert full == doc
    [some] = (await di.get(RULES, params={"fields": "uuid,actions"})).json()[
        "inspection_rules"]
    assert set(some) == {"uuid", "actions", "links"}


async def test_the_list_pages_with_next_and_sorts(di: httpx.AsyncClient) -> None:
    made = [await create(di, {**TRAIT_RULE, "priority": p}) for p in (5, 1, 9)]
    resp = await di.get(RULES, params={"limit": "2", "sort_key": "priority",
                                       "sort_dir": "desc"})
    body = resp.json()
    assert [r["priority"] for r in body["inspection_rules"]] == [9, 5]
    assert "marker=" in body["next"] and body["next"].startswith("http://di.test/v1/")
    rest = await di.get(body["next"].removeprefix("http://di.test"))
    assert [r["priority"] for r in rest.json()["inspection_rules"]] == [1]
    assert "next" not in rest.json()
    assert {r["uuid"] for r in made} == set(await stored_uuids(di))


@pytest.mark.parametrize(("query", "field"), [
    ({"sort_key": "actions"}, "sort_key"), ({"sort_dir": "sideways"}, "sort_dir"),
    ({"limit": "-1"}, "limit"), ({"limit": "x"}, "limit"), ({"detail": "maybe"}, "detail"),
    ({"fields": "uuid,nope"}, "fields"), ({"marker": "nope"}, "marker"),
    ({"colour": "red"}, "colour")])
async def test_bad_list_queries_are_400_naming_the_parameter(
        di: httpx.AsyncClient, query: dict[str, str], field: str) -> None:
    resp = await di.get(RULES, params=query)
    assert resp.status_code == 400
    assert field in error_message(resp)


@pytest.mark.parametrize(("body", "field"), [
    ({"actions": []}, "actions"),
    ({"conditions": []}, "actions"),
    ({"actions": [{"op": "no-such-action", "args": {}}]}, "actions[0]"),
    ({"actions": [{"op": "add-trait", "args": {}}]}, "actions[0]"),
    ({"actions": [{"op": "add-trait", "args": {"name": "X"}}],
      "conditions": [{"op": "bigger", "args": {}}]}, "conditions[0]"),
    ({"actions": [{"op": "add-trait", "args": {"name": "X"}}], "priority": 10000},
     "priority"),
    ({"actions": [{"op": "add-trait", "args": {"name": "X"}}], "priority": "high"},
     "priority"),
    ({"actions": [{"op": "add-trait", "args": {"name": "X"}}], "phase": "early"}, "phase"),
    ({"actions": [{"op": "add-trait", "args": {"name": "X"}}], "colour": "red"}, "colour"),
    ({"actions": [{"op": "add-trait", "args": {"name": "X"}}],
      "conditions": [{"op": "eq", "args": {"values": [1, 1]}, "multiple": "most"}]},
     "multiple"),
])
async def test_invalid_rules_are_400_naming_the_field_and_not_stored(
        di: httpx.AsyncClient, body: dict[str, Any], field: str) -> None:
    resp = await di.post(RULES, json=body)
    assert resp.status_code == 400, resp.text
    assert field in error_message(resp)
    assert await stored_uuids(di) == []


async def test_a_taken_uuid_is_409(di: httpx.AsyncClient) -> None:
    doc = await create(di, TRAIT_RULE)
    resp = await di.post(RULES, json={**TRAIT_RULE, "uuid": doc["uuid"]})
    assert resp.status_code == 409


async def test_patch_changes_and_revalidates_the_rule(di: httpx.AsyncClient) -> None:
    doc = await create(di, TRAIT_RULE)
    resp = await di.patch(f"{RULES}/{doc['uuid']}", json=[
        {"op": "replace", "path": "/priority", "value": 20},
        {"op": "add", "path": "/actions/-", "value": {"op": "log", "args": {"msg": "hi"}}},
        {"op": "remove", "path": "/description"}])
    assert resp.status_code == 200, resp.text
    patched = resp.json()
    assert patched["priority"] == 20 and patched["description"] is None
    assert [a["op"] for a in patched["actions"]] == ["add-trait", "log"]
    assert patched["updated_at"] is not None and patched["created_at"] == doc["created_at"]
    bad = await di.patch(f"{RULES}/{doc['uuid']}", json=[
        {"op": "replace", "path": "/actions/0/op", "value": "explode"}])
    assert bad.status_code == 400 and "actions[0]" in error_message(bad)
    assert (await di.get(f"{RULES}/{doc['uuid']}")).json() == patched


async def test_sensitive_rules_hide_conditions_and_actions_and_stay_sensitive(
        di: httpx.AsyncClient) -> None:
    doc = await create(di, {**TRAIT_RULE, "sensitive": True})
    assert doc["conditions"] is None and doc["actions"] is None
    shown = (await di.get(f"{RULES}/{doc['uuid']}")).json()
    assert shown["conditions"] is None and shown["actions"] is None
    resp = await di.patch(f"{RULES}/{doc['uuid']}", json=[
        {"op": "replace", "path": "/sensitive", "value": False}])
    assert resp.status_code == 400 and "sensitive" in error_message(resp)


async def test_delete_one_and_delete_all(di: httpx.AsyncClient) -> None:
    one, two = await create(di, TRAIT_RULE), await create(di, TRAIT_RULE)
    assert (await di.delete(f"{RULES}/{one['uuid']}")).status_code == 204
    assert (await di.delete(f"{RULES}/{one['uuid']}")).status_code == 404
    assert await stored_uuids(di) == [two["uuid"]]
    assert (await di.delete(RULES)).status_code == 204
    assert await stored_uuids(di) == []


async def test_a_path_no_stored_inventory_has_is_a_warning(bm: httpx.AsyncClient,
                                                           di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m))
    good = await create(di, TRAIT_RULE)
    assert "warnings" not in good
    typo = await create(di, {**TRAIT_RULE, "conditions": [{"op": "gt", "args": {
        "values": ["{inventory[memory][physical_gb]}", 4]}}]})
    assert len(typo["warnings"]) == 1 and "memory.physical_gb" in typo["warnings"][0]


async def test_positional_args_are_accepted_and_shown_as_posted(di: httpx.AsyncClient) -> None:
    posted = {"conditions": [{"op": "is-true", "args": ["{plugin_data[auto_discovered]}"]}],
              "actions": [{"op": "set-attribute", "args": ["/driver", "idrac"]}]}
    doc = await create(di, posted)
    assert (doc["conditions"], doc["actions"]) == (posted["conditions"], posted["actions"])
    assert "warnings" not in doc
    assert (await di.get(f"{RULES}/{doc['uuid']}")).json() == doc


async def test_a_comparison_mapped_from_a_list_is_created_with_a_warning(
        di: httpx.AsyncClient) -> None:
    doc = await create(di, {**TRAIT_RULE, "conditions": [
        {"op": "eq", "args": ["node:memory_mb", 4096], "multiple": "all"}]})
    assert doc["conditions"] == [{"op": "eq", "args": ["node:memory_mb", 4096]}]
    [warning] = doc["warnings"]
    assert warning.startswith("conditions[0].args:") and "not a list" in warning


async def test_patch_edits_and_shows_the_posted_form(di: httpx.AsyncClient) -> None:
    doc = await create(di, {"actions": [{"op": "set-attribute",
                                         "args": ["/properties/capabilities", "boot_mode:uefi"]}]})
    updated = [{"op": "set-attribute", "args": ["/driver", "fake"]}]
    resp = await di.patch(f"{RULES}/{doc['uuid']}", json=[
        {"path": "/actions", "op": "add", "value": updated},
        {"path": "/actions/0/args/1", "op": "replace", "value": "fake-hardware"}])
    assert resp.status_code == 200, resp.text
    expected = [{"op": "set-attribute", "args": ["/driver", "fake-hardware"]}]
    assert resp.json()["actions"] == expected
    assert (await di.get(f"{RULES}/{doc['uuid']}")).json()["actions"] == expected
    too_many = await di.patch(f"{RULES}/{doc['uuid']}", json=[
        {"path": "/actions/0/args/-", "op": "add", "value": "extra"}])
    assert too_many.status_code == 400 and "set-attribute" in error_message(too_many)


# --- the inspector's dialect --------------------------------------------------------------

INSPECTOR_RULE = {"description": "inspector rule",
                  "conditions": [{"op": "ge", "field": "memory_mb", "value": 1024}],
                  "actions": [{"action": "set-attribute", "path": "/extra/by",
                               "value": "inspector"}]}


async def test_inspector_rules_have_the_inspectors_shapes(di: httpx.AsyncClient) -> None:
    resp = await di.post("/v1/rules", json=INSPECTOR_RULE)
    assert resp.status_code == 201, resp.text
    doc = resp.json()
    assert doc["links"] == [{"rel": "self", "href": f"http://di.test/v1/rules/{doc['uuid']}"}]
    [condition] = doc["conditions"]
    assert condition["field"] == "memory_mb" and condition["invert"] is False
    assert condition["multiple"] == "any"
    listed = (await di.get("/v1/rules")).json()
    assert listed == {"rules": [{"uuid": doc["uuid"], "description": "inspector rule",
                                 "scope": None, "links": doc["links"]}]}
    assert (await di.get(f"/v1/rules/{doc['uuid']}")).json() == doc


async def test_each_dialect_sees_only_its_own_rules(di: httpx.AsyncClient) -> None:
    inspector = (await di.post("/v1/rules", json=INSPECTOR_RULE)).json()
    ironic = await create(di, TRAIT_RULE)
    assert await stored_uuids(di) == [ironic["uuid"]]
    assert (await di.get(f"{RULES}/{inspector['uuid']}")).status_code == 404
    assert (await di.get(f"/v1/rules/{ironic['uuid']}")).status_code == 404
    assert (await di.delete("/v1/rules")).status_code == 204
    assert (await di.get("/v1/rules")).json() == {"rules": []}
    assert await stored_uuids(di) == [ironic["uuid"]]


async def test_an_invalid_inspector_rule_is_400_and_not_stored(di: httpx.AsyncClient) -> None:
    resp = await di.post("/v1/rules", json={"conditions": [], "actions": [
        {"action": "no-such-action"}]})
    assert resp.status_code == 400 and "actions[0]" in error_message(resp)
    assert (await di.get("/v1/rules")).json() == {"rules": []}


# --- dry run ------------------------------------------------------------------------------


async def test_a_dry_run_shows_what_a_rule_would_do_and_changes_nothing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, memory_mb=16384))
    before = await node(bm, m.uuid)
    data_before = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    resp = await di.post(f"{RULES}/dry_run", json={"node": m.name, "rule": TRAIT_RULE})
    assert resp.status_code == 200, resp.text
    result = resp.json()
    assert result["node"] == m.uuid and result["rule"] is None and result["matched"] is True
    assert result["conditions"][0]["result"] is True
    assert result["actions"][0]["op"] == "add-trait" and result["actions"][0]["changes"]
    assert result["failure"] is None
    assert await node(bm, m.uuid) == before
    assert (await di.get(f"/v1/introspection/{m.uuid}/data")).json() == data_before


async def test_a_dry_run_of_a_stored_rule_names_it(bm: httpx.AsyncClient,
                                                   di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, memory_mb=1024))
    doc = await create(di, TRAIT_RULE)
    result = (await di.post(f"{RULES}/dry_run", json={"node": m.uuid, "rule": doc["uuid"]})
              ).json()
    assert result["rule"] == doc["uuid"] and result["matched"] is False
    assert result["actions"] == []


async def test_a_dry_run_without_stored_data_is_404(bm: httpx.AsyncClient,
                                                    di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    resp = await di.post(f"{RULES}/dry_run", json={"node": m.uuid, "rule": TRAIT_RULE})
    assert resp.status_code == 404


@pytest.mark.parametrize(("body", "field"), [
    ({"rule": TRAIT_RULE}, "node"), ({"node": "n"}, "rule"),
    ({"node": "n", "rule": "not-a-uuid"}, "rule"),
    ({"node": "n", "rule": TRAIT_RULE, "extra": 1}, "node and rule")])
async def test_a_bad_dry_run_is_400_naming_the_field(di: httpx.AsyncClient,
                                                     body: dict[str, Any], field: str) -> None:
    resp = await di.post(f"{RULES}/dry_run", json=body)
    assert resp.status_code == 400 and field in error_message(resp)
