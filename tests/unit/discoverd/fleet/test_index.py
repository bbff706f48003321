"""The sharing of repeated values between documents (fleet/index.py's interner): documents
read the same after it, and what repeats is one object."""

from __future__ import annotations

import copy

from ironsight.discoverd.fleet.index import _Interner

DOC = {"uuid": "u1", "inventory": {"cpu": {"flags": ["fpu", "vme", "sse"]},
                                   "pci_devices": [{"bus": "0000:00:01.0", "class": "060400"},
                                                   {"bus": "0000:03:00.0", "class": "030000"}],
                                   "disks": [{"name": "/dev/sda", "serial": "S1"}]},
       "traits": [], "hardware": {"nics": [{"mac": "52:54:00:00:00:01", "speed": 1000}]}}


def test_a_document_reads_the_same_after_sharing() -> None:
    assert _Interner()(copy.deepcopy(DOC)) == DOC


def test_flat_records_and_scalar_lists_that_repeat_are_one_object() -> None:
    intern = _Interner()
    first, second = intern(copy.deepcopy(DOC)), intern(copy.deepcopy(DOC))
    assert first["inventory"]["cpu"]["flags"] is second["inventory"]["cpu"]["flags"]
    assert first["inventory"]["pci_devices"][1] is second["inventory"]["pci_devices"][1]


def test_records_that_differ_are_not_shared() -> None:
    intern = _Interner()
    other = copy.deepcopy(DOC)
    other["inventory"]["disks"][0]["serial"] = "S2"
    first, second = intern(copy.deepcopy(DOC)), intern(other)
    assert first["inventory"]["disks"][0]["serial"] == "S1"
    assert second["inventory"]["disks"][0]["serial"] == "S2"


def test_true_and_one_are_not_taken_for_each_other() -> None:
    intern = _Interner()
    one, true = intern({"a": [1]}), intern({"a": [True]})
    assert true["a"][0] is True and one["a"][0] == 1 and one["a"][0] is not True
