"""What is built once per process: engine, bus, stores, limiter, clock, id generator, keys."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

import structlog
from argon2 import PasswordHasher
from sqlalchemy import text

from meadhall.config import Settings
from meadhall.core.clock import Clock
from meadhall.core.crypto import Keys
from meadhall.core.ids import SnowflakeGenerator
from meadhall.core.ratelimit import Limiter
from meadhall.core.stores import MemoryStore, RedisStore
from meadhall.db.engine import create_engine
from meadhall.db.migrate import migrate
from meadhall.db.uow import UnitOfWork, unit_of_work
from meadhall.filestore import FileStore, LocalFileStore
from meadhall.realtime.bus import LocalBus, RedisBus
from meadhall.realtime.jobs import Jobs

log = structlog.get_logger("meadhall.runtime")


class Runtime:
    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        redis_prefix: str = "meadhall",
    ) -> None:
        self.settings = settings
        self.clock = clock or Clock()
        self.ids = SnowflakeGenerator(settings.NODE_ID)
        self.engine = create_engine(settings.database_url)
        self.redis: Any = None
        self.redis_prefix = redis_prefix
        if settings.REDIS_URL:
            import redis.asyncio as aioredis

            self.redis = aioredis.from_url(settings.REDIS_URL, decode_responses=True)
            self.store: MemoryStore | RedisStore = RedisStore(self.redis, prefix=redis_prefix)
            self.bus: LocalBus = RedisBus(self.redis, channel=f"{redis_prefix}:events")
        else:
            self.store = MemoryStore()
            self.bus = LocalBus()
        self.limiter = Limiter(self.store, settings.RATE_LIMITS)
        self.jobs = Jobs(self.store, self.clock)
        # File content under DATA_DIR/files (a shared volume when several nodes run).
        self.files: FileStore = LocalFileStore(settings.DATA_DIR / "files")
        self.secret = settings.secret_key()
        self.keys = Keys.derive(self.secret)
        # argon2id, 64 MiB, 2 passes: ~190 ms per check on one core here (docs/benchmarks.md), above the
        # OWASP minimum. Tests swap in a cheaper hasher; the benchmark measures this one.
        self.password_hasher = PasswordHasher(time_cost=2, memory_cost=65_536, parallelism=1)
        # Backup codes carry 62 bits of entropy, so a lighter (still slow) profile suffices; up to 8 are
        # checked per attempt.
        self.code_hasher = PasswordHasher(time_cost=2, memory_cost=19_456, parallelism=1)
        # Slow hashes run off the event loop, at most one per core at a time (bounds memory too).
        self.hash_pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2), thread_name_prefix="hash")
        self.started = False
        self.applied_migrations: list[str] = []

    async def start(self, *, run_migrations: bool = True) -> None:
        if self.started:
            return
        if run_migrations:
            self.applied_migrations = await migrate(self.engine)
            if self.applied_migrations:
                log.info("migrations applied", applied=self.applied_migrations)
        await self.bus.start()
        self.started = True

    async def close(self) -> None:
        await self.jobs.stop()
        await self.bus.close()
        if self.redis is not None:
            await self.redis.aclose()
        await self.engine.dispose()
        self.hash_pool.shutdown(wait=False)
        self.started = False

    async def off_loop(self, fn: Any, *args: Any) -> Any:
        """Run CPU-heavy work (password and code hashing) in the hashing pool."""
        return await asyncio.get_running_loop().run_in_executor(self.hash_pool, fn, *args)

    def now_ts(self) -> float:
        return self.clock.timestamp()

    def uow(self) -> Any:
        """A write transaction; events publish after commit."""
        return unit_of_work(self.engine, self.clock, self.ids, self.bus, write=True)

    def read(self) -> Any:
        """A read-only transaction (no write lock on SQLite)."""
        return unit_of_work(self.engine, self.clock, self.ids, self.bus, write=False)

    async def check_database(self) -> bool:
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            return True
        except Exception:
            return False

    async def check_redis(self) -> bool | None:
        if self.redis is None:
            return None
        try:
            return bool(await self.redis.ping())
        except Exception:
            return False


@asynccontextmanager
async def running(settings: Settings, **kwargs: Any) -> AsyncIterator[Runtime]:
    rt = Runtime(settings, **kwargs)
    try:
        await rt.start()
        yield rt
    finally:
        await rt.close()


__all__ = ["Runtime", "running", "UnitOfWork"]
