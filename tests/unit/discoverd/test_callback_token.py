"""The per-introspection callback token: issued while the introspection waits for its
ramdisk, stored only as a digest, dead once the introspection ends; and the Processor's
check of it (a wrong or missing token changes nothing; only an authenticated error report
ends an introspection)."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from sqlalchemy import select

from ironsight.common.exceptions import Invalid
from ironsight.discoverd import callback_token, states
from ironsight.discoverd.db.models import introspections
from ironsight.discoverd.node_cache import NodeCache

from .helpers import UUID1, Build, Discoverd, agent_report


async def waiting(di: Discoverd) -> None:
    di.ironic.add_node(UUID1)
    await di.introspector.start(UUID1)
    await di.settle()
    assert await di.state(UUID1) == states.WAITING
    di.ironic.calls.clear()


async def issued(cache: NodeCache, uuid: str = UUID1) -> str:
    token = await cache.issue_token(uuid)
    assert token is not None
    return token


@pytest.fixture
def strict(build: Build) -> Discoverd:
    """discoverd with the embedded default: tokenless reports refused."""
    return build(introspection={"allow_tokenless_reports": "false"})


# --- the token itself -------------------------------------------------------------------------

def test_tokens_are_random_url_safe_and_at_least_128_bits() -> None:
    tokens = {callback_token.new_token() for _ in range(100)}
    assert len(tokens) == 100
    for token in tokens:
        assert len(token) >= 43  # 32 bytes in base64url
        assert token.replace("-", "").replace("_", "").isalnum()


def test_only_the_token_matches_its_digest() -> None:
    token = callback_token.new_token()
    stored = callback_token.digest(token)
    assert stored == hashlib.sha256(token.encode()).hexdigest()
    assert callback_token.matches(stored, token)
    assert not callback_token.matches(stored, token + "x")
    assert not callback_token.matches(None, token)
    assert not callback_token.matches("", "")


# --- the node cache ---------------------------------------------------------------------------

async def test_only_the_digest_is_stored(strict: Discoverd) -> None:
    await waiting(strict)
    token = await issued(strict.cache)
    async with strict.cache.db.read() as conn:
        row = (await conn.execute(select(introspections))).mappings().one()
    assert row["callback_token_hash"] == callback_token.digest(token)
    assert token not in str(dict(row))


async def test_the_introspection_document_never_holds_the_token(strict: Discoverd) -> None:
    await waiting(strict)
    token = await issued(strict.cache)
    intro = await strict.cache.get(UUID1)
    assert token not in repr(intro)
    assert callback_token.digest(token) not in repr(intro)


async def test_a_new_token_replaces_the_previous_one(strict: Discoverd) -> None:
    await waiting(strict)
    first = await issued(strict.cache)
    second = await issued(strict.cache)
    stored = await strict.cache.callback_token_hash(UUID1)
    assert callback_token.matches(stored, second)
    assert not callback_token.matches(stored, first)


async def test_no_token_is_issued_unless_the_introspection_waits_for_its_ramdisk(
        strict: Discoverd) -> None:
    await waiting(strict)
    await strict.processor.process(agent_report(), await issued(strict.cache))
    assert await strict.cache.issue_token(UUID1) is None  # processing
    await strict.settle()
    assert await strict.cache.issue_token(UUID1) is None  # finished
    assert await strict.cache.issue_token("no-such-node") is None


@pytest.mark.parametrize("end", ["finish", "error", "abort", "timeout", "restart"])
async def test_the_token_dies_when_the_introspection_ends(strict: Discoverd, end: str) -> None:
    await waiting(strict)
    await issued(strict.cache)
    if end == "finish":
        await strict.processor.process(agent_report(), await issued(strict.cache))
        await strict.settle()
    elif end == "error":
        await strict.processor.end_with_error(UUID1, "broken")
    elif end == "abort":
        await strict.introspector.abort(UUID1)
    elif end == "timeout":
        await strict.cache.timed_out(dt.datetime(2999, 1, 1))
    else:
        await strict.processor.end_with_error(UUID1, "broken")
        await strict.settle()
        await strict.introspector.start(UUID1)
    await strict.settle()
    assert await strict.cache.callback_token_hash(UUID1) is None


# --- the check of reports ---------------------------------------------------------------------

async def test_report_with_its_token_is_accepted(strict: Discoverd) -> None:
    await waiting(strict)
    assert await strict.processor.process(agent_report(), await issued(strict.cache)) == {
        "uuid": UUID1}
    await strict.settle()
    assert await strict.state(UUID1) == states.FINISHED


async def test_wrong_token_is_refused_with_403_and_changes_nothing(strict: Discoverd) -> None:
    await waiting(strict)
    await issued(strict.cache)
    with pytest.raises(callback_token.TokenRefused) as refused:
        await strict.processor.process(agent_report(cpus=64), "not-the-token")
    assert refused.value.code == 403
    await strict.settle()
    assert await strict.state(UUID1) == states.WAITING
    assert "patch_node" not in strict.ironic.names()


async def test_wrong_token_never_ends_the_introspection_with_an_error(
        strict: Discoverd) -> None:
    await waiting(strict)
    await issued(strict.cache)
    with pytest.raises(callback_token.TokenRefused):
        await strict.processor.process(agent_report(error="fake failure"), "forged")
    assert (await strict.cache.get(UUID1)).state == states.WAITING


async def test_report_without_a_token_is_refused_by_default(strict: Discoverd) -> None:
    await waiting(strict)
    with pytest.raises(callback_token.TokenRefused, match="allow_tokenless_reports"):
        await strict.processor.process(agent_report())
    await strict.settle()
    assert await strict.state(UUID1) == states.WAITING


async def test_report_without_a_token_is_accepted_when_allowed(di: Discoverd) -> None:
    await waiting(di)
    assert await di.processor.process(agent_report()) == {"uuid": UUID1}
    await di.settle()
    assert await di.state(UUID1) == states.FINISHED


async def test_error_report_without_a_token_never_ends_the_introspection(
        di: Discoverd) -> None:
    """Even where tokenless reports are allowed: recorded, logged, answered 400, and the
    introspection keeps waiting (for a real report, or its timeout)."""
    await waiting(di)
    with pytest.raises(Invalid, match="does not end the introspection"):
        await di.processor.process(agent_report(error="fake failure"))
    await di.settle()
    intro = await di.cache.get(UUID1)
    assert (intro.state, intro.error) == (states.WAITING, None)
    assert "set_power" not in di.ironic.names()


async def test_a_wrong_token_is_refused_even_where_tokenless_reports_are_allowed(
        di: Discoverd) -> None:
    await waiting(di)
    with pytest.raises(callback_token.TokenRefused):
        await di.processor.process(agent_report(), "forged")
    assert await di.state(UUID1) == states.WAITING


async def test_token_of_an_ended_introspection_is_dead(strict: Discoverd) -> None:
    await waiting(strict)
    token = await issued(strict.cache)
    await strict.processor.process(agent_report(), token)
    await strict.settle()
    await strict.introspector.start(UUID1)
    await strict.settle()
    with pytest.raises(callback_token.TokenRefused):
        await strict.processor.process(agent_report(), token)
    assert await strict.state(UUID1) == states.WAITING


def test_the_agent_and_the_client_send_the_header_discoverd_reads() -> None:
    from ironsight.agent import cmdline
    from ironsight.baremetal.api import ramdisk
    from ironsight.discoverd import client

    assert cmdline.TOKEN_HEADER == client.CALLBACK_TOKEN_HEADER == callback_token.HEADER
    assert ramdisk.TOKEN_HEADER == callback_token.HEADER
    assert cmdline.TOKEN_KEY == callback_token.KERNEL_PARAM
