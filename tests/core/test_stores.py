"""The short-lived state stores (memory, Redis): the GCRA step, values that expire on the service clock,
set-if-absent and single-use take. Both stores must behave identically."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from meadhall.core.ratelimit import gcra_step
from meadhall.core.stores import MemoryStore, RedisStore
from tests.support.isolation import TEST_REDIS_URL
from tests.support.stores import STORE_KINDS, open_store

NOW = 1_700_000_000.123456


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[MemoryStore | RedisStore]:
    async with open_store(request.param) as s:
        yield s


# ---------------------------------------------------------------- GCRA step


def test_gcra_step_fresh_key():
    allowed, slack, reset_after, new_tat = gcra_step(None, 1.0, 10, NOW)
    assert allowed
    assert slack == pytest.approx(9.0)  # nine more tokens of credit
    assert reset_after == pytest.approx(1.0)
    assert new_tat == pytest.approx(NOW + 1)


def test_gcra_step_refusal_keeps_tat():
    tat = NOW + 10  # bucket of 10 fully used
    allowed, slack, reset_after, new_tat = gcra_step(tat, 1.0, 10, NOW)
    assert not allowed
    assert slack == pytest.approx(1.0)  # wait this long
    assert reset_after == pytest.approx(10.0)
    assert new_tat == tat


def test_gcra_step_stale_tat_counts_from_now():
    allowed, slack, _, new_tat = gcra_step(NOW - 500, 1.0, 10, NOW)
    assert allowed
    assert slack == pytest.approx(9.0)
    assert new_tat == pytest.approx(NOW + 1)


async def test_store_gcra_follows_the_pure_step(store):
    results = [await store.gcra("k", 1.0, 3, NOW) for _ in range(4)]
    assert [r[0] for r in results] == [True, True, True, False]
    assert [r[1] for r in results] == pytest.approx([2.0, 1.0, 0.0, 1.0], abs=1e-6)
    assert [r[2] for r in results] == pytest.approx([1.0, 2.0, 3.0, 3.0], abs=1e-6)


async def test_store_gcra_matches_memory_on_a_random_trace(store):
    """Same decisions, to the microsecond, as the in-process reference for an irregular trace."""
    reference = MemoryStore()
    rng = random.Random(1234)
    now = NOW
    for i in range(300):
        now += rng.choice([0.0, 0.0, 0.01, 0.05, 0.3, 1.0, 2.5])
        emission, burst = (0.05, 20) if i % 2 else (1.0, 5)
        key = f"k{i % 2}"
        got = await store.gcra(key, emission, burst, now)
        want = await reference.gcra(key, emission, burst, now)
        assert got[0] == want[0], f"step {i}"
        assert got[1:] == pytest.approx(want[1:], abs=1e-6), f"step {i}"


async def test_delete_clears_a_gcra_bucket(store):
    for _ in range(3):
        await store.gcra("k", 1.0, 3, NOW)
    assert not (await store.gcra("k", 1.0, 3, NOW))[0]
    await store.delete("k")
    assert (await store.gcra("k", 1.0, 3, NOW))[0]


# ---------------------------------------------------------------- values on the service clock


async def test_set_and_get_until_expiry(store):
    await store.set("v", {"a": [1, 2]}, ttl=30, now=NOW)
    assert await store.get("v", NOW) == {"a": [1, 2]}
    assert await store.get("v", NOW + 30) == {"a": [1, 2]}
    assert await store.get("v", NOW + 30.001) is None
    assert await store.get("missing", NOW) is None


async def test_set_overwrites(store):
    await store.set("v", 1, ttl=30, now=NOW)
    await store.set("v", 2, ttl=30, now=NOW)
    assert await store.get("v", NOW) == 2


async def test_set_nx_only_when_absent_or_expired(store):
    assert await store.set_nx("n", "first", ttl=10, now=NOW)
    assert not await store.set_nx("n", "second", ttl=10, now=NOW + 5)
    assert await store.get("n", NOW + 5) == "first"
    # Expired by the service clock: no longer blocks.
    assert await store.set_nx("n", "third", ttl=10, now=NOW + 11)
    assert await store.get("n", NOW + 11) == "third"


async def test_take_is_single_use(store):
    await store.set("t", "token-value", ttl=60, now=NOW)
    assert await store.take("t", NOW) == "token-value"
    assert await store.take("t", NOW) is None
    assert await store.get("t", NOW) is None


async def test_take_of_expired_value_returns_none_and_removes_it(store):
    await store.set("t", "token-value", ttl=60, now=NOW)
    assert await store.take("t", NOW + 61) is None
    assert await store.get("t", NOW) is None  # gone even for an earlier clock


async def test_delete_value(store):
    await store.set("d", 1, ttl=60, now=NOW)
    await store.delete("d")
    assert await store.get("d", NOW) is None


@pytest.mark.skipif(not TEST_REDIS_URL, reason="TEST_REDIS_URL not set")
async def test_redis_store_keys_carry_the_prefix():
    async with open_store("redis") as s:
        assert isinstance(s, RedisStore)
        await s.set("v", 1, ttl=60, now=NOW)
        await s.gcra("g", 1.0, 3, NOW)
        keys = sorted([k async for k in s.client.scan_iter(match=f"{s.prefix}:*")])
        assert keys == [f"{s.prefix}:g", f"{s.prefix}:v"]
