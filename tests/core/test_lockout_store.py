"""Lockout reservations in the stores (memory, Redis): an attempt is counted before it is checked, the
threshold locks at once, a lock refuses without counting, and a release takes back one reservation of
its own counting window (lifting a lock it started). Both stores must behave identically."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from meadhall.core.stores import MemoryStore, RedisStore
from tests.support.stores import STORE_KINDS, open_store

NOW = 1_700_000_000.123456
KW = {"window": 900, "threshold": 5, "lock": 900}


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[MemoryStore | RedisStore]:
    async with open_store(request.param) as s:
        yield s


async def test_the_threshold_reservation_locks_and_later_ones_are_refused(store):
    for n in range(1, 5):
        allowed, doc = await store.reserve("k", NOW, **KW)
        assert allowed and doc["n"] == n and doc["until"] == 0
    allowed, doc = await store.reserve("k", NOW + 1, **KW)
    assert allowed and doc["n"] == 5 and doc["until"] == pytest.approx(NOW + 901)
    allowed, doc = await store.reserve("k", NOW + 2, **KW)
    assert not allowed and doc["n"] == 5 and doc["until"] == pytest.approx(NOW + 901)  # not counted


async def test_parallel_reservations_are_all_counted(store):
    results = await asyncio.gather(*(store.reserve("k", NOW, **KW) for _ in range(20)))
    assert sorted(d["n"] for ok, d in results if ok) == [1, 2, 3, 4, 5]
    assert sum(1 for ok, _ in results if not ok) == 15


async def test_release_takes_back_one_and_lifts_the_lock_it_started(store):
    docs = [(await store.reserve("k", NOW, **KW))[1] for _ in range(5)]
    await store.release("k", NOW, first=docs[-1]["first"], threshold=5)
    allowed, doc = await store.reserve("k", NOW + 1, **KW)
    assert allowed and doc["n"] == 5  # 4 kept + this one: locked again
    assert not (await store.reserve("k", NOW + 2, **KW))[0]


async def test_release_of_an_older_window_changes_nothing(store):
    _, old = await store.reserve("k", NOW, **KW)
    for _ in range(3):
        await store.reserve("k", NOW + 1000, **KW)  # the window passed: a new count
    await store.release("k", NOW + 1001, first=old["first"], threshold=5)
    _, doc = await store.reserve("k", NOW + 1002, **KW)
    assert doc["n"] == 4


async def test_a_lock_that_ended_starts_a_new_count(store):
    for _ in range(5):
        await store.reserve("k", NOW, **KW)
    allowed, doc = await store.reserve("k", NOW + 901, **KW)
    assert allowed and doc["n"] == 1 and doc["until"] == 0


async def test_release_of_an_unknown_key_is_harmless(store):
    await store.release("missing", NOW, first=NOW, threshold=5)
    allowed, doc = await store.reserve("missing", NOW, **KW)
    assert allowed and doc["n"] == 1
