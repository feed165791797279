"""Where voice states live (docs/voice.md, "Where voice states live"): in Redis when `REDIS_URL` is set, so
that every node sees the same participants, else in this process.

A user has at most one voice state. Every change is one compare-and-set on the user's state: the service
reads it, computes the next one and writes it only if nothing changed meanwhile (else it reads again), and
the user limit of the target room is checked in the same atomic step. Redis does it in one Lua script (a
hash per guild, user id -> state JSON; a key per user naming their guild; a set of guilds with states).

States carry ids as strings: Lua numbers are doubles, and snowflakes do not fit in 53 bits.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, Protocol

from meadhall.runtime import Runtime

Outcome = Literal["ok", "changed", "full"]


@dataclass(frozen=True)
class VoiceState:
    """One participant of one guild voice room (the VoiceState object without its `member`)."""

    guild_id: str
    channel_id: str
    user_id: str
    microphone: bool
    sound: bool
    camera: bool
    screen: bool
    server_mute: bool
    server_deafen: bool
    joined_at: str  # ISO timestamp, as answered
    joined_ts: float  # the same as seconds, for the reconciliation's grace period

    def encode(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def decode(cls, raw: str) -> VoiceState:
        return cls(**json.loads(raw))

    def but(self, **changes: Any) -> VoiceState:
        return replace(self, **changes)


@dataclass(frozen=True)
class Limit:
    """The user limit of the target room, checked in the same atomic step as the write."""

    channel_id: str
    limit: int


class VoiceStore(Protocol):
    async def get(self, user_id: int) -> str | None: ...

    async def cas(self, user_id: int, expected: str | None, new: VoiceState | None, limit: Limit | None = None
                  ) -> Outcome: ...

    async def in_guild(self, guild_id: int) -> list[str]: ...

    async def guilds(self) -> list[int]: ...


class MemoryVoiceStore:
    """One node: plain dictionaries; each step runs without an await, so it is atomic on the event loop."""

    def __init__(self) -> None:
        self.by_guild: dict[str, dict[str, str]] = {}
        self.guild_of: dict[str, str] = {}

    async def get(self, user_id: int) -> str | None:
        gid = self.guild_of.get(str(user_id))
        return None if gid is None else self.by_guild.get(gid, {}).get(str(user_id))

    async def cas(self, user_id: int, expected: str | None, new: VoiceState | None, limit: Limit | None = None
                  ) -> Outcome:
        uid = str(user_id)
        gid = self.guild_of.get(uid)
        current = None if gid is None else self.by_guild.get(gid, {}).get(uid)
        if current != expected:
            return "changed"
        if new is not None and limit is not None and limit.limit > 0:
            others = [VoiceState.decode(r) for u, r in self.by_guild.get(new.guild_id, {}).items() if u != uid]
            if sum(1 for s in others if s.channel_id == limit.channel_id) >= limit.limit:
                return "full"
        if gid is not None:
            room = self.by_guild.get(gid, {})
            room.pop(uid, None)
            if not room:
                self.by_guild.pop(gid, None)
            del self.guild_of[uid]
        if new is not None:
            self.by_guild.setdefault(new.guild_id, {})[uid] = new.encode()
            self.guild_of[uid] = new.guild_id
        return "ok"

    async def in_guild(self, guild_id: int) -> list[str]:
        return list(self.by_guild.get(str(guild_id), {}).values())

    async def guilds(self) -> list[int]:
        return [int(g) for g in self.by_guild]


# KEYS: user key, guilds set. ARGV: user id, expected state ('' = none), new state ('' = none), new guild
# id, limited channel id ('' = no limit), limit, guild hash key prefix.
_CAS_LUA = """
local gid = redis.call('GET', KEYS[1])
local current = ''
if gid then current = redis.call('HGET', ARGV[7] .. gid, ARGV[1]) or '' end
if current ~= ARGV[2] then return 'changed' end
if ARGV[3] ~= '' and ARGV[5] ~= '' then
  local n = 0
  local rows = redis.call('HGETALL', ARGV[7] .. ARGV[4])
  for i = 1, #rows, 2 do
    if rows[i] ~= ARGV[1] and cjson.decode(rows[i + 1]).channel_id == ARGV[5] then n = n + 1 end
  end
  if n >= tonumber(ARGV[6]) then return 'full' end
end
if gid then
  redis.call('HDEL', ARGV[7] .. gid, ARGV[1])
  if redis.call('HLEN', ARGV[7] .. gid) == 0 then redis.call('SREM', KEYS[2], gid) end
  redis.call('DEL', KEYS[1])
end
if ARGV[3] ~= '' then
  redis.call('HSET', ARGV[7] .. ARGV[4], ARGV[1], ARGV[3])
  redis.call('SET', KEYS[1], ARGV[4])
  redis.call('SADD', KEYS[2], ARGV[4])
end
return 'ok'
"""


class RedisVoiceStore:
    """Several nodes: the same steps in Redis, the compare-and-set in one script."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.prefix = f"{prefix}:voice"
        self._cas = client.register_script(_CAS_LUA)

    def _user(self, user_id: int) -> str:
        return f"{self.prefix}:user:{user_id}"

    def _guild(self, guild_id: int | str) -> str:
        return f"{self.prefix}:guild:{guild_id}"

    async def get(self, user_id: int) -> str | None:
        gid = await self.client.get(self._user(user_id))
        if gid is None:
            return None
        raw = await self.client.hget(self._guild(gid), str(user_id))
        return None if raw is None else str(raw)

    async def cas(self, user_id: int, expected: str | None, new: VoiceState | None, limit: Limit | None = None
                  ) -> Outcome:
        limited = new is not None and limit is not None and limit.limit > 0
        args = [str(user_id), expected or "", "" if new is None else new.encode(),
                "" if new is None else new.guild_id, limit.channel_id if limited and limit else "",
                limit.limit if limited and limit else 0, f"{self.prefix}:guild:"]
        outcome = await self._cas(keys=[self._user(user_id), f"{self.prefix}:guilds"], args=args)
        return str(outcome)  # type: ignore[return-value]  # the script answers one of the three words

    async def in_guild(self, guild_id: int) -> list[str]:
        return [str(v) for v in await self.client.hvals(self._guild(guild_id))]

    async def guilds(self) -> list[int]:
        return sorted(int(g) for g in await self.client.smembers(f"{self.prefix}:guilds"))


# One in-process store per runtime (tests build many runtimes in one process; a node has one).
_MEMORY: weakref.WeakKeyDictionary[Runtime, MemoryVoiceStore] = weakref.WeakKeyDictionary()


def voice_store(rt: Runtime) -> VoiceStore:
    if rt.redis is not None:
        return RedisVoiceStore(rt.redis, rt.redis_prefix)
    store = _MEMORY.get(rt)
    if store is None:
        store = _MEMORY[rt] = MemoryVoiceStore()
    return store
