"""Sharing periodic work between live replicas: one owner per item, and only the share of a
member that joins or leaves moves."""

from __future__ import annotations

from ironsight.common.ring import Share

KEYS = [f"node-{i}" for i in range(300)]


def test_a_lone_member_owns_everything() -> None:
    assert all(Share("a:1").mine(key) for key in KEYS)


def test_every_item_has_exactly_one_owner_among_the_live_members() -> None:
    shares = [Share(name) for name in ("a:1", "b:2", "c:3")]
    for share in shares:
        share.update(["a:1", "b:2", "c:3"])
    for key in KEYS:
        assert sum(share.mine(key) for share in shares) == 1


def test_the_work_is_spread_over_the_members() -> None:
    share = Share("a:1")
    share.update(["b:2", "c:3"])
    assert 60 < sum(share.mine(key) for key in KEYS) < 140  # about a third of 300


def test_only_the_share_of_a_member_that_died_moves() -> None:
    before, after = Share("a:1"), Share("a:1")
    before.update(["b:2", "c:3"])
    after.update(["b:2"])  # c:3 died
    moved = [key for key in KEYS if before.owner(key) != after.owner(key)]
    assert moved and all(before.owner(key) == "c:3" for key in moved)


def test_a_member_counts_itself_alive() -> None:
    share = Share("a:1")
    share.update(["b:2"])
    assert share.members == ("a:1", "b:2")
