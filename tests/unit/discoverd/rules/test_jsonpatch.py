"""The JSON patch of Ironic's inspection rule PATCH: add, replace, remove; a bad op changes
nothing and names where it is."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.common.exceptions import Invalid
from ironsight.discoverd.rules import jsonpatch

DOC = {"description": "d", "priority": 1, "actions": [{"op": "fail", "args": {"msg": "m"}}]}


def test_add_replace_and_remove_apply_in_order() -> None:
    result = jsonpatch.apply(DOC, [
        {"op": "replace", "path": "/priority", "value": 5},
        {"op": "add", "path": "/actions/-", "value": {"op": "log", "args": {"msg": "x"}}},
        {"op": "add", "path": "/actions/0/args/level", "value": "info"},
        {"op": "remove", "path": "/description"}])
    assert result == {"priority": 5, "actions": [
        {"op": "fail", "args": {"msg": "m", "level": "info"}},
        {"op": "log", "args": {"msg": "x"}}]}


def test_the_input_is_never_modified() -> None:
    before = repr(DOC)
    jsonpatch.apply(DOC, [{"op": "replace", "path": "/actions/0/args/msg", "value": "n"}])
    with pytest.raises(Invalid):
        jsonpatch.apply(DOC, [{"op": "remove", "path": "/priority"},
                              {"op": "remove", "path": "/nothing"}])
    assert repr(DOC) == before


@pytest.mark.parametrize(("ops", "where"), [
    ([], "patch"),
    ({"op": "add"}, "patch"),
    ([{"op": "move", "path": "/a", "from": "/b"}], r"patch\[0\]"),
    ([{"op": "test", "path": "/priority", "value": 1}], r"patch\[0\].op"),
    ([{"op": "add", "path": "priority", "value": 1}], r"patch\[0\].path"),
    ([{"op": "replace", "path": "/priority"}], r"patch\[0\].value"),
    ([{"op": "replace", "path": "/nothing", "value": 1}], r"patch\[0\].path"),
    ([{"op": "remove", "path": "/actions/3"}], r"patch\[0\].path"),
    ([{"op": "remove", "path": "/actions/x"}], r"patch\[0\].path"),
])
def test_a_bad_patch_names_the_op_at_fault(ops: Any, where: str) -> None:
    with pytest.raises(Invalid, match=where):
        jsonpatch.apply(DOC, ops)
