"""What is built once per process: engine, bus, stores, limiter, clock, id generator, keys."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import structlog
from argon2 import PasswordHasher
from sqlalchemy import event, text

from meadhall.audit.keying import key_older_chains
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
from meadhall.integrations.outbound import Outbound, parse_networks
from meadhall.metrics import Metrics
from meadhall.realtime.bus import LocalBus, RedisBus
from meadhall.realtime.jobs import Jobs
from meadhall.realtime.outbox import POLL_EVERY, OutboxDrain

log = structlog.get_logger("meadhall.runtime")

# A hung or unreachable dependency must answer 503 within seconds, not hold the request (docs/reference/errors.md):
# Redis answers in well under a millisecond when healthy, so these bounds only ever cut off an outage.
REDIS_CONNECT_TIMEOUT = 2.0
REDIS_SOCKET_TIMEOUT = 2.0
# One quick retry covers a pooled connection that Redis dropped (restart, idle timeout); more would only
# stretch an outage's answer.
REDIS_RETRIES = 1
# Seconds a serving process's PostgreSQL statement may take (the slowest request's queries take well under a
# second; migrations and CLI runs are not bounded): past it the request answers 503 (docs/operations.md,
# "Outages").
DATABASE_COMMAND_TIMEOUT = 15.0
# Seconds a graceful stop gives its hooks in all (`Runtime.stop_hooks`), within the 10 s a stopping node has.
STOP_HOOKS_WITHIN = 1.5
# asyncpg waits 60 s for a connection by default; a stopped or hung PostgreSQL answers 503 after this.
DATABASE_CONNECT_TIMEOUT = 5.0


# How long a command waits for a pooled connection when all REDIS_MAX_CONNECTIONS are busy. Healthy commands
# hold one for well under a millisecond, so only an outage (every connection stuck in its socket timeout) or
# a burst thousands deep waits this long; then the request answers 503 rather than hanging.
REDIS_POOL_TIMEOUT = 3.0


def redis_client(url: str, *, socket_timeout: float | None = REDIS_SOCKET_TIMEOUT,
                 max_connections: int | None = None) -> Any:
    """A redis-py asyncio client with bounded connects and reads. The bus subscriber passes
    `socket_timeout=None`: it waits for messages indefinitely by design (pub/sub reads block).

    With `max_connections` (the commands client), the pool blocks: a command beyond the limit waits up to
    REDIS_POOL_TIMEOUT for a free connection. redis-py's default pool instead raises MaxConnectionsError at
    once, which closed gateway connections when some 150 heartbeats met at the same moment."""
    import redis.asyncio as aioredis
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialBackoff

    options: dict[str, Any] = dict(
        decode_responses=True, socket_connect_timeout=REDIS_CONNECT_TIMEOUT, socket_timeout=socket_timeout,
        socket_keepalive=True, retry=Retry(ExponentialBackoff(cap=0.2, base=0.05), REDIS_RETRIES),
        health_check_interval=30 if socket_timeout is None else 0,
    )
    if max_connections is None:
        return aioredis.from_url(url, **options)
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=max_connections,
                                                    timeout=REDIS_POOL_TIMEOUT, **options)
    return aioredis.Redis.from_pool(pool)


def _bound_database_connects(engine: Any, *, serving: bool) -> None:
    """Give PostgreSQL connection attempts a time limit (SQLite opens a local file), and a serving process's
    statements one too: a server that hangs with connections open (stopped, partitioned) would otherwise
    hold every request, and the pool's check of a connection before use, for ever. The limits are read at
    each connect (tests shorten them)."""
    if engine.dialect.name != "postgresql":
        return

    @event.listens_for(engine.sync_engine, "do_connect")
    def _on_connect(_dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]) -> None:
        cparams.setdefault("timeout", DATABASE_CONNECT_TIMEOUT)
        if serving:
            cparams.setdefault("command_timeout", DATABASE_COMMAND_TIMEOUT)


class Runtime:
    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        redis_prefix: str = "meadhall",
        outbox: bool = False,
    ) -> None:
        self.settings = settings
        # A CLI run: its events go to the outbox that serving processes drain, never to a bus of its own
        # (docs/architecture.md, "CLI effects reach live connections").
        self.outbox = outbox
        self.clock = clock or Clock()
        self.ids = SnowflakeGenerator(settings.NODE_ID)
        self.engine = create_engine(settings.database_url)
        _bound_database_connects(self.engine, serving=not outbox)
        # None unless METRICS_ENABLED: the request and delivery paths skip all counting then.
        self.metrics: Metrics | None = Metrics() if settings.METRICS_ENABLED else None
        self.redis: Any = None
        self.redis_prefix = redis_prefix
        if settings.REDIS_URL:
            self.redis = redis_client(settings.REDIS_URL, max_connections=settings.REDIS_MAX_CONNECTIONS)
            self.store: MemoryStore | RedisStore = RedisStore(self.redis, prefix=redis_prefix)
            self.bus: LocalBus = RedisBus(self.redis, channel=f"{redis_prefix}:events",
                                          subscriber=redis_client(settings.REDIS_URL, socket_timeout=None))
        else:
            self.store = MemoryStore()
            self.bus = LocalBus()
        self.bus.metrics = self.metrics
        self.limiter = Limiter(self.store, settings.RATE_LIMITS)
        self.jobs = Jobs(self.store, self.clock)
        # File content under DATA_DIR/files (a shared volume when several nodes run).
        self.files: FileStore = LocalFileStore(settings.DATA_DIR / "files")
        # The one way out for link previews and Web Push, behind the address guard (docs/outbound.md).
        self.outbound = Outbound(parse_networks(settings.OUTBOUND_ALLOWED_NETWORKS),
                                 user_agent=f"Meadhall (+{settings.PUBLIC_URL})")
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
        self.hash_pending = 0  # submitted to the pool and not finished (the metrics' queue gauge)
        # Image decoding and re-encoding have their own pool, so a burst of large uploads never delays a
        # sign-in; two workers bound the memory of concurrent decodes (one is up to ~64 MiB of pixels).
        self.image_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="image")
        if self.metrics is not None:
            self.metrics.watch_hash_pool(lambda: self.hash_pending)
        self.started = False
        self.applied_migrations: list[str] = []
        # What a graceful stop waits for before the runtime closes (queued deliveries that must not be cut
        # mid-way): each hook is given a share of STOP_HOOKS_WITHIN (docs/operations.md, "Restarts").
        self.stop_hooks: list[Callable[[float], Awaitable[None]]] = []

    async def start(self, *, run_migrations: bool = True) -> None:
        if self.started:
            return
        if run_migrations:
            self.applied_migrations = await self._migrate()
            if self.applied_migrations:
                log.info("migrations applied", applied=self.applied_migrations)
        if not self.outbox:  # an outbox process publishes nothing and listens to nothing
            await self.bus.start()
        # The heads of chains written before the keyed audit chain get their marker and HMAC (docs/audit.md,
        # "Keyed hashes"): one query when there is nothing to key.
        await key_older_chains(self.engine, self.uow)
        self.started = True

    async def _migrate(self) -> list[str]:
        """On PostgreSQL the migrations get an engine of their own, without the statement limit of serving:
        one may rightly take minutes (an index built on a large table)."""
        if self.engine.dialect.name != "postgresql":
            return await migrate(self.engine)
        engine = create_engine(self.settings.database_url)
        _bound_database_connects(engine, serving=False)
        try:
            return await migrate(engine)
        finally:
            await engine.dispose()

    async def close(self) -> None:
        await self.jobs.stop()
        await self.bus.close()
        if self.redis is not None:
            await self.redis.aclose()
        await self.engine.dispose()
        self.hash_pool.shutdown(wait=False)
        self.image_pool.shutdown(wait=False)
        self.started = False

    async def run_stop_hooks(self) -> None:
        """A graceful stop: each stop hook gets its share of STOP_HOOKS_WITHIN seconds; one that fails or
        overruns is logged and the stop goes on (the process must exit within its 10 s)."""
        hooks, self.stop_hooks = self.stop_hooks, []
        for hook in hooks:
            share = STOP_HOOKS_WITHIN / len(hooks)
            try:
                async with asyncio.timeout(share + 0.5):
                    await hook(share)
            except Exception:
                log.exception("stop hook failed", hook=getattr(hook, "__qualname__", repr(hook)))

    def serve_outbox(self) -> OutboxDrain:
        """A serving process publishes on its bus what CLI runs left in the outbox, polling every POLL_EVERY
        seconds on every node (each row is claimed by one of them)."""
        drain = OutboxDrain(self.engine, self.clock, self.ids, self.bus)
        self.jobs.add("outbox", POLL_EVERY, drain.run, leader_only=False)
        return drain

    async def off_loop(self, fn: Any, *args: Any) -> Any:
        """Run CPU-heavy work (password and code hashing) in the hashing pool."""
        self.hash_pending += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self.hash_pool, fn, *args)
        finally:
            self.hash_pending -= 1

    async def off_loop_images(self, fn: Any, *args: Any) -> Any:
        """Run image checks and re-encoding in the image pool."""
        return await asyncio.get_running_loop().run_in_executor(self.image_pool, fn, *args)

    def now_ts(self) -> float:
        return self.clock.timestamp()

    def uow(self) -> AbstractAsyncContextManager[UnitOfWork]:
        """A write transaction; events publish after commit."""
        return unit_of_work(self.engine, self.clock, self.ids, self.bus, write=True, outbox=self.outbox,
                            audit_key=self.keys.audit_chain)

    def read(self) -> AbstractAsyncContextManager[UnitOfWork]:
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
