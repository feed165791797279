"""Periodic jobs (docs/scaling.md, timers): a leader-only job runs once per period whichever node ticks
first, on one process (MemoryStore) and across nodes sharing Redis (RedisStore, when TEST_REDIS_URL is
set); a per-node job runs on every tick. The clock is a MovableClock: periods are moved, not waited."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from meadhall.core.clock import MovableClock
from meadhall.core.stores import MemoryStore, RedisStore
from meadhall.realtime.jobs import Jobs

TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL") or None
needs_redis = pytest.mark.skipif(not TEST_REDIS_URL, reason="TEST_REDIS_URL not set")

EVERY = 30.0


def counting(runs: list[str], label: str) -> Any:
    async def fn() -> None:
        runs.append(label)

    return fn


async def test_leader_job_runs_once_per_period_on_one_node():
    clock = MovableClock()
    jobs = Jobs(MemoryStore(), clock)
    runs: list[str] = []
    jobs.add("sweep", EVERY, counting(runs, "a"))
    job = jobs.jobs[0]
    assert await jobs.run_once(job) is True
    assert await jobs.run_once(job) is False  # same period
    clock.advance(EVERY)
    assert await jobs.run_once(job) is True
    assert runs == ["a", "a"]


async def test_per_node_job_runs_on_every_tick():
    jobs = Jobs(MemoryStore(), MovableClock())
    runs: list[str] = []
    jobs.add("hub-sweep", EVERY, counting(runs, "a"), leader_only=False)
    for _ in range(3):
        assert await jobs.run_once(jobs.jobs[0]) is True
    assert runs == ["a", "a", "a"]


async def test_a_failing_job_still_counts_as_run_and_does_not_raise():
    jobs = Jobs(MemoryStore(), MovableClock())

    async def broken() -> None:
        raise RuntimeError("job bug")

    jobs.add("broken", EVERY, broken)
    assert await jobs.run_once(jobs.jobs[0]) is True


async def test_the_loop_runs_jobs_and_stops():
    jobs = Jobs(MemoryStore(), MovableClock())
    ran = asyncio.Event()

    async def fn() -> None:
        ran.set()

    jobs.add("quick", 0.01, fn, leader_only=False)
    jobs.start()
    try:
        await asyncio.wait_for(ran.wait(), 5)
    finally:
        await jobs.stop()
    assert jobs._tasks == []


# ---------------------------------------------------------------- several nodes on one Redis


@pytest.fixture
async def redis_nodes() -> AsyncIterator[tuple[list[RedisStore], MovableClock]]:
    """Four nodes, each its own Redis client, one key prefix; one clock (nodes agree on time)."""
    import redis.asyncio as aioredis

    prefix = f"test-{uuid.uuid4().hex[:12]}"
    clients = [aioredis.from_url(TEST_REDIS_URL, decode_responses=True) for _ in range(4)]
    try:
        yield [RedisStore(c, prefix=prefix) for c in clients], MovableClock()
    finally:
        keys = [k async for k in clients[0].scan_iter(match=f"{prefix}:*")]
        if keys:
            await clients[0].delete(*keys)
        for c in clients:
            await c.aclose()


@needs_redis
async def test_two_nodes_run_a_period_once(redis_nodes):
    stores, clock = redis_nodes
    runs: list[str] = []
    nodes = []
    for label, store in zip("ab", stores, strict=False):
        jobs = Jobs(store, clock)
        jobs.add("presence-sweep", EVERY, counting(runs, label))
        nodes.append(jobs)

    for period in range(40):
        # Both nodes tick in the same period at the same moment (the race a leader claim must win).
        claimed = await asyncio.gather(*(n.run_once(n.jobs[0]) for n in nodes))
        assert sorted(claimed) == [False, True], (period, claimed)
        # A later tick of either node in the same period does nothing.
        assert await nodes[period % 2].run_once(nodes[period % 2].jobs[0]) is False
        clock.advance(EVERY)
    assert len(runs) == 40
    assert set(runs) <= {"a", "b"}


@needs_redis
async def test_many_nodes_racing_claim_once(redis_nodes):
    stores, clock = redis_nodes
    runs: list[str] = []
    nodes = []
    for i, store in enumerate(stores):
        jobs = Jobs(store, clock)
        jobs.add("orphan-files", EVERY, counting(runs, str(i)))
        nodes.append(jobs)
    for _ in range(25):
        claimed = await asyncio.gather(*(n.run_once(n.jobs[0]) for n in nodes for _ in range(3)))
        assert claimed.count(True) == 1
        clock.advance(EVERY)
    assert len(runs) == 25


@needs_redis
async def test_a_claim_expires_by_the_service_clock(redis_nodes):
    """The claim of a period is an ordinary value with a service-clock expiry: moving the clock past it
    frees the key even though Redis itself still holds it."""
    stores, clock = redis_nodes
    store = stores[0]
    now = clock.timestamp()
    assert await store.set_nx("claim", 1, 10, now) is True
    assert await stores[1].set_nx("claim", 1, 10, now + 5) is False
    assert await stores[1].set_nx("claim", 2, 10, now + 10.5) is True
    assert await store.get("claim", now + 11) == 2
