"""The per-user connection cap of docs/gateway.md: at most 10 identified gateway connections per user, across
all nodes; the one that goes over closes the user's OLDEST connection with 4013.

The count lives where every node sees it (Redis when configured, docs/scaling.md). Each connection is
an entry with its place in the user's order of attachment and the service-clock time it was last seen
(its heartbeats refresh it). A node that crashes never removes its entries: they stop being refreshed
and are dropped once older than the stale window, so a dead node's connections neither count against
the user nor push the user's live connections out.
"""

from __future__ import annotations

import itertools
from typing import Any, Protocol

MAX_CONNECTIONS_PER_USER = 10


class ConnectionCaps(Protocol):
    async def attach(self, user_id: int, conn_id: str, now: float, stale_before: float) -> list[str]:
        """Count `conn_id` for the user; returns the ids of the oldest connections over the cap (which
        the caller closes, wherever they live). Entries last seen before `stale_before` are dropped."""
        ...

    async def refresh(self, user_id: int, conn_id: str, now: float) -> None:
        """A heartbeat: the connection is alive (an entry already removed stays removed)."""
        ...

    async def release(self, user_id: int, conn_id: str) -> None:
        """The connection closed."""
        ...


class MemoryConnectionCaps:
    """Single-node mode: the counts of this process."""

    def __init__(self, limit: int = MAX_CONNECTIONS_PER_USER) -> None:
        self.limit = limit
        self._order = itertools.count()
        # user -> conn id -> [attachment order, last seen]
        self._users: dict[int, dict[str, list[float]]] = {}

    async def attach(self, user_id: int, conn_id: str, now: float, stale_before: float) -> list[str]:
        entries = self._users.setdefault(user_id, {})
        for stale in [cid for cid, (_, seen) in entries.items() if seen < stale_before]:
            del entries[stale]
        entries[conn_id] = [next(self._order), now]
        over = len(entries) - self.limit
        if over <= 0:
            return []
        evicted = sorted(entries, key=lambda cid: entries[cid][0])[:over]
        for cid in evicted:
            del entries[cid]
        return evicted

    async def refresh(self, user_id: int, conn_id: str, now: float) -> None:
        entry = self._users.get(user_id, {}).get(conn_id)
        if entry is not None:
            entry[1] = now

    async def release(self, user_id: int, conn_id: str) -> None:
        entries = self._users.get(user_id)
        if entries is not None:
            entries.pop(conn_id, None)
            if not entries:
                del self._users[user_id]

    async def count(self, user_id: int) -> int:
        return len(self._users.get(user_id, ()))


# KEYS: the user's order set (score: attachment number), seen set (score: last seen), attachment
# counter. ARGV: connection id, now, stale_before, limit, key lifetime in ms. One step, so that two
# nodes attaching at once never both stay under the cap.
_ATTACH_LUA = """
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[3])
for _, id in ipairs(stale) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
local order = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[1], order, ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
local evicted = {}
if over > 0 then
  evicted = redis.call('ZRANGE', KEYS[1], 0, over - 1)
  for _, id in ipairs(evicted) do
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
  end
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
return evicted
"""


class RedisConnectionCaps:
    """Shared by every node: two sorted sets per user and an attachment counter."""

    def __init__(self, client: Any, prefix: str, stale_after: float, limit: int = MAX_CONNECTIONS_PER_USER) -> None:
        self.client = client
        self.prefix = prefix
        self.limit = limit
        # The keys outlive the stale window a little, then vanish with the last of the user's entries.
        self._ttl_ms = int(stale_after * 2 * 1000) + 60_000
        self._attach = client.register_script(_ATTACH_LUA)

    def _keys(self, user_id: int) -> list[str]:
        base = f"{self.prefix}:gw:conns:{user_id}"
        return [f"{base}:order", f"{base}:seen", f"{base}:n"]

    async def attach(self, user_id: int, conn_id: str, now: float, stale_before: float) -> list[str]:
        evicted = await self._attach(keys=self._keys(user_id),
                                     args=[conn_id, repr(now), repr(stale_before), self.limit, self._ttl_ms])
        return [str(cid) for cid in evicted]

    async def refresh(self, user_id: int, conn_id: str, now: float) -> None:
        order, seen, counter = self._keys(user_id)
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.zadd(seen, {conn_id: now}, xx=True)
            for key in (order, seen, counter):
                pipe.pexpire(key, self._ttl_ms)
            await pipe.execute()

    async def release(self, user_id: int, conn_id: str) -> None:
        order, seen, _ = self._keys(user_id)
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.zrem(order, conn_id)
            pipe.zrem(seen, conn_id)
            await pipe.execute()

    async def count(self, user_id: int) -> int:
        return int(await self.client.zcard(self._keys(user_id)[0]))
