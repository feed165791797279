"""One live process per NODE_ID on a shared Redis (docs/deployment.md, "Several nodes").

The node id is part of every snowflake: two serving processes with one NODE_ID mint the same ids in the same
millisecond, and their writes fail with 500 on a unique key, at random, under load. A serving process takes a
lease on its id in Redis before it serves, renews it while it runs and gives it back when it stops. A start
that finds the id held waits for the lease to lapse (a node killed a moment ago held it; a restart of that
node must not fail), then refuses to serve, naming the id."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

log = structlog.get_logger("meadhall.node")

LEASE_S = 15.0  # a killed node's id is free again this long after its last renewal
RENEW_EVERY = 5.0
POLL_S = 0.5

# ARGV: token, lease ms. Renews the lease this process holds, takes it again if it lapsed (a long pause);
# returns 1, or 0 when another process holds the id now.
_RENEW_LUA = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] or not held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
_RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
"""


class NodeIdInUse(Exception):
    pass


class NodeLease:
    def __init__(self, client: Any, prefix: str, node_id: int) -> None:
        self.client = client
        self.node_id = node_id
        self.key = f"{prefix}:node:{node_id}"
        self.token = uuid.uuid4().hex
        self._renew = client.register_script(_RENEW_LUA)
        self._release = client.register_script(_RELEASE_LUA)
        self.warned = False

    async def take(self, wait: float = LEASE_S + 1.0) -> None:
        """Hold the id, waiting up to `wait` seconds for another holder's lease to lapse."""
        await self._until(lambda: self.client.set(self.key, self.token, nx=True, px=int(LEASE_S * 1000)), wait)

    async def wait_free(self, wait: float = LEASE_S + 1.0) -> None:
        """Wait, as `take` does, until nobody holds the id, without taking it: `meadhall serve` asks before it
        starts the server, so that a refusal is one line and not a failed start-up's trace."""

        async def free() -> bool:
            return not await self.client.exists(self.key)

        await self._until(free, wait)

    async def _until(self, attempt: Callable[[], Awaitable[Any]], wait: float) -> None:
        deadline = time.monotonic() + wait
        told = False
        while not await attempt():
            if time.monotonic() >= deadline:
                raise NodeIdInUse(
                    f"NODE_ID {self.node_id} is in use by another running node of this instance: give every "
                    "node its own NODE_ID (0-1023)")
            if not told:
                log.info("NODE_ID held by another process; waiting for its lease to lapse", node_id=self.node_id)
                told = True
            await asyncio.sleep(POLL_S)

    async def renew(self) -> None:
        """The periodic job. Losing the id to another process cannot be undone here: said loudly, once. Redis
        away is said in one line (a job's failure is logged with its trace, which holds the event loop)."""
        try:
            held = await self._renew(keys=[self.key], args=[self.token, int(LEASE_S * 1000)])
        except Exception as exc:
            log.warning("NODE_ID lease not renewed", node_id=self.node_id, error=repr(exc))
            return
        if held:
            self.warned = False
        elif not self.warned:
            log.error("another process took this node's NODE_ID: the two mint the same ids", node_id=self.node_id)
            self.warned = True

    async def release(self) -> None:
        await self._release(keys=[self.key], args=[self.token])
