"""Shared short-lived state: rate-limit TATs, lockout counters, throttles, dedupe keys.

`MemoryStore` serves one process; `RedisStore` is shared by every node (docs/scaling.md). Both take
`now` from the caller instead of reading a clock, so expiry follows the service clock that tests move.
Numbers leave Lua through `%.17g`: Lua's `tostring` keeps 14 significant digits, which at epoch-second
scale rounds a TAT by up to 0.05 ms and can refuse the last token of a burst.
The Redis client is passed in (duck-typed), which keeps this module free of the redis package.
"""

from __future__ import annotations

import json
from typing import Any

from meadhall.core.ratelimit import gcra_step

_GCRA_LUA = """
local now = tonumber(ARGV[1])
local emission = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local function num(x) return string.format('%.17g', x) end
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + emission
local allow_at = new_tat - burst * emission
if now < allow_at then
  return {0, num(allow_at - now), num(tat - now)}
end
redis.call('SET', KEYS[1], num(new_tat), 'PX', math.ceil((new_tat - now) * 1000) + 1000)
return {1, num(now - allow_at), num(new_tat - now)}
"""

# Values carry their own expiry (`exp`, service-clock seconds) so that a moved clock expires them; the
# Redis TTL is only a cleanup bound.
_TAKE_LUA = """
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local doc = cjson.decode(raw)
redis.call('DEL', KEYS[1])
if doc['exp'] < tonumber(ARGV[1]) then return nil end
return raw
"""


# Set unless a value lives (by its service-clock `exp`): one step, so that of several nodes claiming
# the same key at once exactly one wins (a check-then-delete-then-SET NX let a late node delete the
# winner's fresh value and win too). ARGV: now, the new document, Redis TTL in milliseconds.
_SET_NX_LUA = """
local raw = redis.call('GET', KEYS[1])
if raw then
  local ok, doc = pcall(cjson.decode, raw)
  if ok and type(doc) == 'table' and tonumber(doc['exp']) and tonumber(doc['exp']) >= tonumber(ARGV[1]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
"""

# Lockout reservations (accounts/lockout.py): an attempt is counted BEFORE its password is checked, so
# that parallel guesses cannot all pass the check while the slow hash runs. Refused (0) while locked;
# otherwise counted, and the lock starts at the threshold. A later `release` takes back an attempt that
# turned out not to be a failure. ARGV: now, window, threshold, lock. Returns {allowed, doc}.
_RESERVE_LUA = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local lock = tonumber(ARGV[4])
local raw = redis.call('GET', KEYS[1])
local doc = nil
if raw then doc = cjson.decode(raw)['v'] end
if doc and doc['until'] > now then return {0, cjson.encode(doc)} end
if (not doc) or now - doc['first'] > window or doc['until'] > 0 then doc = {n = 0, first = now, ['until'] = 0} end
doc['n'] = doc['n'] + 1
if doc['n'] >= threshold then doc['until'] = now + lock end
local ttl = window + lock
redis.call('SET', KEYS[1], cjson.encode({exp = now + ttl, v = doc}), 'PX', math.floor(ttl * 1000) + 60000)
return {1, cjson.encode(doc)}
"""

# Take back one reservation of the counting window that started at ARGV[2] (a reservation of an older
# window is gone with it); below the threshold again, the lock it started is lifted. ARGV: now, first,
# threshold.
_RELEASE_LUA = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local wrapped = cjson.decode(raw)
local doc = wrapped['v']
if math.abs(doc['first'] - tonumber(ARGV[2])) > 0.001 or doc['n'] <= 0 then return 0 end
doc['n'] = doc['n'] - 1
if doc['n'] < tonumber(ARGV[3]) then doc['until'] = 0 end
wrapped['v'] = doc
redis.call('SET', KEYS[1], cjson.encode(wrapped), 'KEEPTTL')
return 1
"""


def reserve_step(doc: dict[str, Any] | None, now: float, window: float, threshold: int, lock: float
                 ) -> tuple[bool, dict[str, Any]]:
    """The pure reservation step shared by both stores: (allowed, document after the step)."""
    if doc and doc["until"] > now:
        return False, doc
    # A lock that has ended starts a new count, as does a window that has passed.
    if not doc or now - doc["first"] > window or doc["until"] > 0:
        doc = {"n": 0, "first": now, "until": 0}
    doc = {**doc, "n": doc["n"] + 1}
    if doc["n"] >= threshold:
        doc["until"] = now + lock
    return True, doc


def release_step(doc: dict[str, Any] | None, first: float, threshold: int) -> dict[str, Any] | None:
    """The pure release step: the document after taking back one reservation, or None to leave it."""
    if not doc or abs(doc["first"] - first) > 0.001 or doc["n"] <= 0:
        return None
    doc = {**doc, "n": doc["n"] - 1}
    if doc["n"] < threshold:
        doc["until"] = 0
    return doc


class MemoryStore:
    """In-process store for single-node mode."""

    def __init__(self) -> None:
        self._tat: dict[str, float] = {}
        self._values: dict[str, tuple[float, Any]] = {}

    async def gcra(self, key: str, emission: float, burst: int, now: float) -> tuple[bool, float, float]:
        allowed, slack, reset_after, new_tat = gcra_step(self._tat.get(key), emission, burst, now)
        self._tat[key] = new_tat
        if len(self._tat) > 100_000:
            self._tat = {k: v for k, v in self._tat.items() if v > now}
        return allowed, slack, reset_after

    async def get(self, key: str, now: float) -> Any:
        item = self._values.get(key)
        if item is None or item[0] < now:
            self._values.pop(key, None)
            return None
        return item[1]

    async def set(self, key: str, value: Any, ttl: float, now: float) -> None:
        self._values[key] = (now + ttl, value)
        if len(self._values) > 100_000:
            self._values = {k: v for k, v in self._values.items() if v[0] >= now}

    async def set_nx(self, key: str, value: Any, ttl: float, now: float) -> bool:
        if await self.get(key, now) is not None:
            return False
        await self.set(key, value, ttl, now)
        return True

    async def reserve(self, key: str, now: float, *, window: float, threshold: int, lock: float
                      ) -> tuple[bool, dict[str, Any]]:
        """Count one attempt unless locked: (allowed, `{"n", "first", "until"}`); atomic (no await inside)."""
        allowed, doc = reserve_step(await self.get(key, now), now, window, threshold, lock)
        if allowed:
            await self.set(key, doc, window + lock, now)
        return allowed, doc

    async def release(self, key: str, now: float, *, first: float, threshold: int) -> None:
        item = self._values.get(key)
        doc = release_step(await self.get(key, now), first, threshold)
        if doc is not None and item is not None:
            self._values[key] = (item[0], doc)

    async def take(self, key: str, now: float) -> Any:
        """Read and delete in one step (single-use values)."""
        value = await self.get(key, now)
        self._values.pop(key, None)
        return value

    async def delete(self, key: str) -> None:
        self._values.pop(key, None)
        self._tat.pop(key, None)

    async def close(self) -> None:
        return None


class RedisStore:
    """Shared store over redis-py asyncio; every read-modify-write step is one Lua script."""

    def __init__(self, client: Any, prefix: str = "meadhall") -> None:
        self.client = client
        self.prefix = prefix
        self._gcra = client.register_script(_GCRA_LUA)
        self._take = client.register_script(_TAKE_LUA)
        self._set_nx = client.register_script(_SET_NX_LUA)
        self._reserve = client.register_script(_RESERVE_LUA)
        self._release = client.register_script(_RELEASE_LUA)

    def _k(self, key: str) -> str:
        return f"{self.prefix}:{key}"

    async def gcra(self, key: str, emission: float, burst: int, now: float) -> tuple[bool, float, float]:
        allowed, slack, reset_after = await self._gcra(keys=[self._k(key)], args=[now, emission, burst])
        return bool(int(allowed)), float(slack), float(reset_after)

    async def get(self, key: str, now: float) -> Any:
        raw = await self.client.get(self._k(key))
        if raw is None:
            return None
        doc = json.loads(raw)
        return doc["v"] if doc["exp"] >= now else None

    async def set(self, key: str, value: Any, ttl: float, now: float) -> None:
        doc = json.dumps({"exp": now + ttl, "v": value})
        await self.client.set(self._k(key), doc, px=max(1, int(ttl * 1000)) + 60_000)

    async def set_nx(self, key: str, value: Any, ttl: float, now: float) -> bool:
        """Set unless a live value exists (one expired by the service clock does not block); atomic."""
        doc = json.dumps({"exp": now + ttl, "v": value})
        return bool(await self._set_nx(keys=[self._k(key)], args=[repr(now), doc, max(1, int(ttl * 1000)) + 60_000]))

    async def reserve(self, key: str, now: float, *, window: float, threshold: int, lock: float
                      ) -> tuple[bool, dict[str, Any]]:
        allowed, raw = await self._reserve(keys=[self._k(key)], args=[repr(now), window, threshold, lock])
        return bool(int(allowed)), dict(json.loads(raw))

    async def release(self, key: str, now: float, *, first: float, threshold: int) -> None:
        await self._release(keys=[self._k(key)], args=[repr(now), repr(first), threshold])

    async def take(self, key: str, now: float) -> Any:
        raw = await self._take(keys=[self._k(key)], args=[now])
        return None if raw is None else json.loads(raw)["v"]

    async def delete(self, key: str) -> None:
        await self.client.delete(self._k(key))

    async def close(self) -> None:
        await self.client.aclose()
