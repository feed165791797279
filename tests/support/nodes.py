"""A second node of the instance under test: its own runtime (caches, bus subscriber) on the same database and,
when the tests run with Redis, the same shared store, serving its own app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from argon2 import PasswordHasher

from meadhall.app import create_app
from meadhall.runtime import Runtime


@asynccontextmanager
async def second_node(settings: Any, rt: Runtime, clock: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of another node beside `rt` (same settings and clock)."""
    async with second_node_with_runtime(settings, rt, clock) as (client, _other):
        yield client


@asynccontextmanager
async def second_node_with_runtime(settings: Any, rt: Runtime, clock: Any
                                   ) -> AsyncIterator[tuple[httpx.AsyncClient, Runtime]]:
    """`second_node`, with the other node's runtime too (to wait for its background work, or give its
    outbound client a test CA)."""
    other = Runtime(settings, clock=clock, redis_prefix=rt.redis_prefix)
    other.password_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await other.start(run_migrations=False)
    try:
        transport = httpx.ASGITransport(app=create_app(settings, other), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield client, other
    finally:
        await other.close()
