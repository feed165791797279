"""Helpers shared by the store and limiter tests: one store per kind, Redis with a key prefix of its own."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from meadhall.core.stores import MemoryStore, RedisStore
from tests.support.isolation import TEST_REDIS_URL

STORE_KINDS = [
    "memory",
    pytest.param("redis", marks=pytest.mark.skipif(not TEST_REDIS_URL, reason="TEST_REDIS_URL not set")),
]


@asynccontextmanager
async def open_store(kind: str) -> AsyncIterator[MemoryStore | RedisStore]:
    if kind == "memory":
        yield MemoryStore()
        return
    import redis.asyncio as aioredis

    assert TEST_REDIS_URL is not None  # the "redis" parameter is skipped without it
    client = aioredis.from_url(TEST_REDIS_URL, decode_responses=True)
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    store = RedisStore(client, prefix=prefix)
    try:
        yield store
    finally:
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
