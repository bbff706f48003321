"""Paths into nested documents: both spellings, and get/set/delete/extend."""

from __future__ import annotations

import pytest

from ironsight.discoverd.rules import paths


def test_slash_and_dot_paths_split_the_same() -> None:
    assert paths.split("/properties/memory_mb") == paths.split("properties.memory_mb") == [
        "properties", "memory_mb"]


def test_slash_paths_decode_json_pointer_escapes() -> None:
    assert paths.split("/extra/a~1b~0c") == ["extra", "a/b~c"]


def test_an_empty_part_is_refused() -> None:
    with pytest.raises(paths.PathError, match="empty part"):
        paths.split("properties..x")


def test_pointer_escapes_what_split_decodes() -> None:
    assert paths.pointer(["extra", "a/b~c"]) == "/extra/a~1b~0c"


def test_set_creates_missing_objects_on_the_way() -> None:
    doc: dict[str, object] = {"extra": {}}
    paths.set_value(doc, ["extra", "lldp", "switch"], "sw1")
    assert doc == {"extra": {"lldp": {"switch": "sw1"}}}


def test_a_numeric_part_indexes_a_list() -> None:
    doc = {"interfaces": [{"name": "eth0"}, {"name": "eth1"}]}
    assert paths.get(doc, ["interfaces", "1", "name"]) == "eth1"


def test_get_of_an_absent_key_names_the_path() -> None:
    with pytest.raises(paths.PathError, match="/properties/cpus"):
        paths.get({"properties": {}}, ["properties", "cpus"])


def test_delete_of_an_absent_key_changes_nothing() -> None:
    doc = {"extra": {"a": 1}}
    assert paths.delete(doc, ["extra", "b"]) is False
    assert doc == {"extra": {"a": 1}}


def test_delete_removes_the_key() -> None:
    doc = {"extra": {"a": 1, "b": 2}}
    assert paths.delete(doc, ["extra", "a"]) is True
    assert doc == {"extra": {"b": 2}}


def test_extend_creates_the_list() -> None:
    doc: dict[str, object] = {}
    assert paths.extend(doc, ["extra", "tags"], "gpu") is True
    assert doc == {"extra": {"tags": ["gpu"]}}


def test_extend_unique_skips_a_present_value() -> None:
    doc = {"tags": ["gpu"]}
    assert paths.extend(doc, ["tags"], "gpu", unique=True) is False
    assert doc == {"tags": ["gpu"]}


def test_extend_of_a_non_list_is_refused() -> None:
    with pytest.raises(paths.PathError, match="not a list"):
        paths.extend({"tags": "gpu"}, ["tags"], "x")
