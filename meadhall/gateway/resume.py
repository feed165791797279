"""Gateway session state for RESUME (docs/gateway.md, docs/scaling.md): owner, last sequence number and the buffer
of the last 1000 dispatches of each gateway session.

`MemoryResumeStore` serves one process. `RedisResumeStore` keeps the state in Redis so that a client
that disconnects from one node can resume on another: every node that holds (or recently held) a
gateway session appends the events it receives for it, and an append is idempotent per event id, so two
nodes appending the same event during a hand-over give it one sequence number.

Sessions carry their own expiry (service-clock seconds): an attached session is kept alive by its
connection's heartbeats, a detached one lives `RESUME_WINDOW` seconds after its connection closed.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

BUFFER_SIZE = 1000
RESUME_WINDOW = 120.0
# An attached session expires only if its node stops refreshing it (crash): heartbeats come every 30 s.
ATTACHED_TTL = 180.0
# Dispatch payloads are stored once per event in Redis; a resume never needs one older than the resume
# window plus the longest time a dispatch can wait in a connection's queue.
EVENT_TTL = 600

GONE = -1  # the gateway session no longer exists (expired or dropped)


def appended_seq(result: int) -> int | None:
    """The sequence number of an append result: positive for a new entry; `-seq - 1` when another node
    had already appended the same event (it is then delivered under that number); None for GONE."""
    if result == GONE:
        return None
    return result if result > 0 else -result - 1


@dataclass(frozen=True)
class Owner:
    user_id: int
    auth_session_id: int


@dataclass
class Replay:
    """What RESUME finds: the owner, and the dispatches after the client's `seq` (None when the buffer
    no longer covers it), and the last sequence number given."""

    owner: Owner
    last_seq: int
    frames: list[tuple[int, str, str]] | None  # (seq, event type, payload json)


class Append(NamedTuple):
    session_id: str
    event_id: str
    type: str
    payload: str
    # False for READY: it is numbered (dispatch 1) but never replayed (a RESUME always starts after it),
    # and keeping it would cost its whole size per session in the memory store.
    replayable: bool = True


class ResumeStore(Protocol):
    async def open(self, session_id: str, owner: Owner, now: float) -> None: ...

    async def append(self, items: list[Append], now: float) -> list[int]:
        """One result per item, in order: see `appended_seq`."""
        ...

    async def append_event(self, session_ids: list[str], event_id: str, type_: str, payload: str,
                           now: float) -> list[int]:
        """One event to many sessions (the hub's hot path): as `append`, one result per session."""
        ...

    async def replay(self, session_id: str, after: int, now: float) -> Replay | None: ...

    async def keep(self, session_id: str, ttl: float, now: float) -> int:
        """Extend the session's life to now + ttl (heartbeat: ATTACHED_TTL; close: RESUME_WINDOW); returns
        its last sequence number, or GONE."""
        ...

    async def drop(self, session_ids: list[str]) -> None: ...


@dataclass
class _MemorySession:
    owner: Owner
    expires: float
    seq: int = 0
    # One entry per dispatch: the event's (type, payload) pair, shared by every receiving session; entry i
    # has number seq - len(frames) + 1 + i (numbers are contiguous per session). payload None: READY.
    frames: deque[tuple[str, str | None]] = field(default_factory=lambda: deque(maxlen=BUFFER_SIZE))


class MemoryResumeStore:
    """One process: the buffers hold references to each event's one encoded payload."""

    def __init__(self) -> None:
        self._sessions: dict[str, _MemorySession] = {}

    def _live(self, session_id: str, now: float) -> _MemorySession | None:
        state = self._sessions.get(session_id)
        if state is not None and state.expires <= now:
            del self._sessions[session_id]
            return None
        return state

    async def open(self, session_id: str, owner: Owner, now: float) -> None:
        self._sessions[session_id] = _MemorySession(owner, now + ATTACHED_TTL)

    async def append(self, items: list[Append], now: float) -> list[int]:
        out: list[int] = []
        for item in items:
            state = self._live(item.session_id, now)
            if state is None:
                out.append(GONE)
                continue
            state.seq += 1
            state.frames.append((item.type, item.payload if item.replayable else None))
            out.append(state.seq)
        return out

    async def append_event(self, session_ids: list[str], event_id: str, type_: str, payload: str,
                           now: float) -> list[int]:
        entry = (type_, payload)
        sessions = self._sessions
        out: list[int] = []
        for sid in session_ids:
            state = sessions.get(sid)
            if state is None or state.expires <= now:
                if state is not None:
                    del sessions[sid]
                out.append(GONE)
                continue
            seq = state.seq = state.seq + 1
            state.frames.append(entry)
            out.append(seq)
        return out

    async def replay(self, session_id: str, after: int, now: float) -> Replay | None:
        state = self._live(session_id, now)
        if state is None:
            return None
        first = state.seq - len(state.frames) + 1
        skip = max(0, after + 1 - first)
        wanted = list(itertools.islice(state.frames, skip, None))
        if any(payload is None for _, payload in wanted):
            return Replay(state.owner, state.seq, None)
        # No payload is None here (checked above); the filter says so to the type checker.
        frames = [(first + skip + i, t, p) for i, (t, p) in enumerate(wanted) if p is not None]
        return Replay(state.owner, state.seq, _frames_after(frames, after, state.seq))

    async def keep(self, session_id: str, ttl: float, now: float) -> int:
        state = self._live(session_id, now)
        if state is None:
            return GONE
        state.expires = now + ttl
        return state.seq

    async def drop(self, session_ids: list[str]) -> None:
        for sid in session_ids:
            self._sessions.pop(sid, None)

    def sweep(self, now: float) -> None:
        for sid in [s for s, st in self._sessions.items() if st.expires <= now]:
            del self._sessions[sid]


def _frames_after(frames: list[tuple[int, str, str]], after: int, last: int) -> list[tuple[int, str, str]] | None:
    """The buffered frames with seq > after, or None when some of them fell out of the buffer."""
    wanted = [f for f in frames if f[0] > after]
    first_needed = after + 1
    if first_needed <= last and (not wanted or wanted[0][0] != first_needed):
        return None
    return wanted


# Keys of one gateway session: {p}gw:{sid} (hash: user, auth, seq, exp), {p}gw:{sid}:buf (list of event
# ids, oldest first), {p}gw:{sid}:ids (hash event id -> seq, the ids in the buffer). Payloads live once
# per event under {p}gw:ev:{event id}. ARGV: prefix, now, then (sid, event id) pairs.
_APPEND_LUA = """
local p = ARGV[1]
local now = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 2 do
  local base = p .. 'gw:' .. ARGV[i]
  local eid = ARGV[i + 1]
  local exp = tonumber(redis.call('HGET', base, 'exp') or '0')
  if exp <= now then
    out[#out + 1] = -1
  else
    local seen = redis.call('HGET', base .. ':ids', eid)
    if seen then
      out[#out + 1] = -tonumber(seen) - 1
    else
      local seq = redis.call('HINCRBY', base, 'seq', 1)
      redis.call('RPUSH', base .. ':buf', eid)
      redis.call('HSET', base .. ':ids', eid, seq)
      local n = redis.call('LLEN', base .. ':buf')
      if n == 1 then
        local t = redis.call('PTTL', base)
        if t > 0 then
          redis.call('PEXPIRE', base .. ':buf', t)
          redis.call('PEXPIRE', base .. ':ids', t)
        end
      elseif n > BUFFER_SIZE then
        local old = redis.call('LPOP', base .. ':buf')
        redis.call('HDEL', base .. ':ids', old)
      end
      out[#out + 1] = seq
    end
  end
end
return out
""".replace("BUFFER_SIZE", str(BUFFER_SIZE))

# ARGV: prefix, sid, now, ttl. Extends a live session (never revives an expired one); returns its last
# sequence number, or -1 (GONE).
_KEEP_LUA = """
local base = ARGV[1] .. 'gw:' .. ARGV[2]
local now = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local exp = tonumber(redis.call('HGET', base, 'exp') or '0')
if exp <= now then return -1 end
redis.call('HSET', base, 'exp', string.format('%.17g', now + ttl))
local px = math.ceil(ttl * 1000) + 60000
redis.call('PEXPIRE', base, px)
redis.call('PEXPIRE', base .. ':buf', px)
redis.call('PEXPIRE', base .. ':ids', px)
return tonumber(redis.call('HGET', base, 'seq') or '0')
"""


class RedisResumeStore:
    """Shared by every node (docs/scaling.md). Expiry follows the service clock (`exp` in the hash);
    the Redis TTLs only bound cleanup."""

    def __init__(self, client: Any, prefix: str = "meadhall") -> None:
        self.client = client
        self.prefix = f"{prefix}:"
        self._append = client.register_script(_APPEND_LUA)
        self._keep = client.register_script(_KEEP_LUA)

    def _base(self, session_id: str) -> str:
        return f"{self.prefix}gw:{session_id}"

    async def open(self, session_id: str, owner: Owner, now: float) -> None:
        base = self._base(session_id)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(base, base + ":buf", base + ":ids")
            pipe.hset(base, mapping={"user": owner.user_id, "auth": owner.auth_session_id, "seq": 0,
                                     "exp": repr(now + ATTACHED_TTL)})
            pipe.pexpire(base, int((ATTACHED_TTL + 60) * 1000))
            await pipe.execute()

    async def store_payloads(self, events: dict[str, tuple[str, str | None]]) -> None:
        """Payloads of events about to be appended, once per event id (SET NX: any node may do it)."""
        async with self.client.pipeline(transaction=False) as pipe:
            for eid, (type_, payload) in events.items():
                pipe.set(f"{self.prefix}gw:ev:{eid}", json.dumps([type_, payload]), ex=EVENT_TTL, nx=True)
            await pipe.execute()

    async def append(self, items: list[Append], now: float) -> list[int]:
        if not items:
            return []
        await self.store_payloads({i.event_id: (i.type, i.payload if i.replayable else None) for i in items})
        args: list[Any] = [self.prefix, repr(now)]
        for item in items:
            args += [item.session_id, item.event_id]
        return [int(x) for x in await self._append(keys=[], args=args)]

    async def append_event(self, session_ids: list[str], event_id: str, type_: str, payload: str,
                           now: float) -> list[int]:
        return await self.append([Append(sid, event_id, type_, payload) for sid in session_ids], now)

    async def replay(self, session_id: str, after: int, now: float) -> Replay | None:
        base = self._base(session_id)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hgetall(base)
            pipe.lrange(base + ":buf", 0, -1)
            pipe.hgetall(base + ":ids")
            meta, ids, seqs = await pipe.execute()
        if not meta or float(meta.get("exp", 0)) <= now:
            return None
        owner = Owner(int(meta["user"]), int(meta["auth"]))
        last = int(meta["seq"])
        wanted = [(int(seqs[eid]), eid) for eid in ids if eid in seqs and int(seqs[eid]) > after]
        payloads = await self.client.mget([f"{self.prefix}gw:ev:{eid}" for _, eid in wanted]) if wanted else []
        frames: list[tuple[int, str, str]] = []
        for (seq, _eid), raw in zip(wanted, payloads, strict=True):
            if raw is None:  # older than EVENT_TTL: cannot be replayed
                return Replay(owner, last, None)
            type_, payload = json.loads(raw)
            if payload is None:  # READY: numbered, never replayed
                return Replay(owner, last, None)
            frames.append((seq, type_, payload))
        return Replay(owner, last, _frames_after(frames, after, last))

    async def keep(self, session_id: str, ttl: float, now: float) -> int:
        return int(await self._keep(keys=[], args=[self.prefix, session_id, repr(now), ttl]))

    async def drop(self, session_ids: list[str]) -> None:
        if session_ids:
            keys = [k for sid in session_ids for k in (self._base(sid), self._base(sid) + ":buf",
                                                      self._base(sid) + ":ids")]
            await self.client.delete(*keys)
