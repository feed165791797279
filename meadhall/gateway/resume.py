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


@dataclass(frozen=True)
class Meta:
    """What the first step of a RESUME reads: the owner, the last sequence number given, and the session's
    position in the event log (every event up to it that concerns the session was numbered for it; "" when
    unknown: a single node, or a session opened before the log)."""

    owner: Owner
    last_seq: int
    pos: str


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
    # The event's position in the event log: the session's `pos` is raised to it ("" : none, READY, RESUMED).
    pos: str = ""


class ResumeStore(Protocol):
    async def open(self, session_id: str, owner: Owner, now: float, pos: str = "") -> None: ...

    async def append(self, items: list[Append], now: float) -> list[int]:
        """One result per item, in order: see `appended_seq`."""
        ...

    async def peek(self, session_id: str, now: float) -> Meta | None:
        """The session's metadata, without its buffer; None when it no longer exists."""
        ...

    async def replay(self, session_id: str, after: int, now: float) -> Replay | None:
        """The dispatches after `after`: reads only those (the buffer's numbers are contiguous)."""
        ...

    async def keep(self, session_id: str, ttl: float, now: float, pos: str = "") -> int:
        """Extend the session's life to now + ttl (heartbeat: ATTACHED_TTL; close: RESUME_WINDOW) and raise
        its position to `pos` if given; returns its last sequence number, or GONE."""
        ...

    async def drop(self, session_ids: list[str]) -> None: ...

    async def existing(self, session_ids: list[str], now: float) -> set[str]:
        """Those of the sessions the store still holds (one round trip)."""
        ...


@dataclass(slots=True)
class _MemorySession:
    owner: Owner
    expires: float
    seq: int = 0
    pos: str = ""
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

    async def open(self, session_id: str, owner: Owner, now: float, pos: str = "") -> None:
        self._sessions[session_id] = _MemorySession(owner, now + ATTACHED_TTL, pos=pos)

    async def append(self, items: list[Append], now: float) -> list[int]:
        out: list[int] = []
        entry: tuple[str, str | None] = ("", None)
        for item in items:
            state = self._live(item.session_id, now)
            if state is None:
                out.append(GONE)
                continue
            state.seq += 1
            # One entry per event, shared by the buffers of all its receivers (consecutive items of one event).
            payload = item.payload if item.replayable else None
            if entry[1] is not payload or entry[0] != item.type:
                entry = (item.type, payload)
            state.frames.append(entry)
            if item.pos:
                state.pos = later(state.pos, item.pos)
            out.append(state.seq)
        return out

    async def peek(self, session_id: str, now: float) -> Meta | None:
        state = self._live(session_id, now)
        return None if state is None else Meta(state.owner, state.seq, state.pos)

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

    async def keep(self, session_id: str, ttl: float, now: float, pos: str = "") -> int:
        state = self._live(session_id, now)
        if state is None:
            return GONE
        state.expires = now + ttl
        if pos:
            state.pos = later(state.pos, pos)
        return state.seq

    async def drop(self, session_ids: list[str]) -> None:
        for sid in session_ids:
            self._sessions.pop(sid, None)

    async def existing(self, session_ids: list[str], now: float) -> set[str]:
        return {sid for sid in session_ids if self._live(sid, now) is not None}

    def sweep(self, now: float) -> None:
        for sid in [s for s, st in self._sessions.items() if st.expires <= now]:
            del self._sessions[sid]


def later(a: str, b: str) -> str:
    """The later of two event-log positions ("ms-seq"; "" is before any)."""
    if not a:
        return b
    if not b:
        return a
    am, _, aseq = a.partition("-")
    bm, _, bseq = b.partition("-")
    return b if (int(bm), int(bseq or 0)) > (int(am), int(aseq or 0)) else a


def _frames_after(frames: list[tuple[int, str, str]], after: int, last: int) -> list[tuple[int, str, str]] | None:
    """The buffered frames with seq > after, or None when some of them fell out of the buffer."""
    wanted = [f for f in frames if f[0] > after]
    first_needed = after + 1
    if first_needed <= last and (not wanted or wanted[0][0] != first_needed):
        return None
    return wanted


# Raises the session's `pos` (an event-log id "ms-seq") to `to` when it is later.
_RAISE_POS_LUA = """
local function raise_pos(base, to)
  if to == '' then return end
  local cur = redis.call('HGET', base, 'pos')
  if cur and cur ~= '' then
    local cm, cs = string.match(cur, '^(%d+)-(%d+)$')
    local tm, ts = string.match(to, '^(%d+)-(%d+)$')
    cm, cs, tm, ts = tonumber(cm), tonumber(cs), tonumber(tm), tonumber(ts)
    if tm < cm or (tm == cm and ts <= cs) then return end
  end
  redis.call('HSET', base, 'pos', to)
end
"""

# Keys of one gateway session: {p}gw:{sid} (hash: user, auth, seq, exp, pos), {p}gw:{sid}:buf (list of
# event ids, oldest first: entry i has number seq - LLEN + 1 + i), {p}gw:{sid}:ids (hash event id -> seq,
# the ids in the buffer). Payloads live once per event under {p}gw:ev:{event id}. ARGV: prefix, now, then
# (sid, event id, log position or "") triples.
_APPEND_LUA = _RAISE_POS_LUA + """
local p = ARGV[1]
local now = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 3 do
  local base = p .. 'gw:' .. ARGV[i]
  local eid = ARGV[i + 1]
  local exp = tonumber(redis.call('HGET', base, 'exp') or '0')
  if exp <= now then
    out[#out + 1] = -1
  else
    raise_pos(base, ARGV[i + 2])
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

# ARGV: prefix, sid, now, ttl, log position or "". Extends a live session (never revives an expired one);
# returns its last sequence number, or -1 (GONE).
_KEEP_LUA = _RAISE_POS_LUA + """
local base = ARGV[1] .. 'gw:' .. ARGV[2]
local now = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local exp = tonumber(redis.call('HGET', base, 'exp') or '0')
if exp <= now then return -1 end
raise_pos(base, ARGV[5])
redis.call('HSET', base, 'exp', string.format('%.17g', now + ttl))
local px = math.ceil(ttl * 1000) + 60000
redis.call('PEXPIRE', base, px)
redis.call('PEXPIRE', base .. ':buf', px)
redis.call('PEXPIRE', base .. ':ids', px)
return tonumber(redis.call('HGET', base, 'seq') or '0')
"""

# ARGV: prefix, sid, now, after. One round trip whatever the buffer holds: {} when the session is gone, else
# user, auth, last seq, pos, then "ok" and the payloads of the dispatches after `after` only (the numbers are
# contiguous, so their place in the buffer follows from `seq` and LLEN), or "gone" when some of them are
# no longer held.
_REPLAY_LUA = """
local p = ARGV[1]
local base = p .. 'gw:' .. ARGV[2]
local now = tonumber(ARGV[3])
local after = tonumber(ARGV[4])
local m = redis.call('HMGET', base, 'user', 'auth', 'seq', 'exp', 'pos')
if not m[4] or tonumber(m[4]) <= now then return {} end
local last = tonumber(m[3] or '0')
local out = {m[1], m[2], tostring(last), m[5] or '', 'ok'}
if after >= last then return out end
local n = redis.call('LLEN', base .. ':buf')
local first = last - n + 1
if after + 1 < first then
  out[5] = 'gone'
  return out
end
local ids = redis.call('LRANGE', base .. ':buf', after + 1 - first, -1)
if #ids == 0 then return out end
local keys = {}
for i, eid in ipairs(ids) do keys[i] = p .. 'gw:ev:' .. eid end
local payloads = redis.call('MGET', unpack(keys))
for i = 1, #payloads do
  if not payloads[i] then
    out[5] = 'gone'
    return {out[1], out[2], out[3], out[4], out[5]}
  end
  out[5 + i] = payloads[i]
end
return out
"""


class RedisResumeStore:
    """Shared by every node (docs/scaling.md). Expiry follows the service clock (`exp` in the hash);
    the Redis TTLs only bound cleanup."""

    def __init__(self, client: Any, prefix: str = "meadhall") -> None:
        self.client = client
        self.prefix = f"{prefix}:"
        self._append = client.register_script(_APPEND_LUA)
        self._keep = client.register_script(_KEEP_LUA)
        self._replay = client.register_script(_REPLAY_LUA)

    def _base(self, session_id: str) -> str:
        return f"{self.prefix}gw:{session_id}"

    async def open(self, session_id: str, owner: Owner, now: float, pos: str = "") -> None:
        base = self._base(session_id)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(base, base + ":buf", base + ":ids")
            pipe.hset(base, mapping={"user": owner.user_id, "auth": owner.auth_session_id, "seq": 0,
                                     "exp": repr(now + ATTACHED_TTL), "pos": pos})
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
            args += [item.session_id, item.event_id, item.pos]
        return [int(x) for x in await self._append(keys=[], args=args)]

    async def peek(self, session_id: str, now: float) -> Meta | None:
        user, auth, seq, exp, pos = await self.client.hmget(self._base(session_id), "user", "auth", "seq", "exp",
                                                            "pos")
        if exp is None or float(exp) <= now:
            return None
        return Meta(Owner(int(user), int(auth)), int(seq or 0), pos or "")

    async def replay(self, session_id: str, after: int, now: float) -> Replay | None:
        answer = await self._replay(keys=[], args=[self.prefix, session_id, repr(now), max(after, 0)])
        if not answer:
            return None
        owner = Owner(int(answer[0]), int(answer[1]))
        last = int(answer[2])
        if answer[4] != "ok":  # older than the buffer or than EVENT_TTL: cannot be replayed
            return Replay(owner, last, None)
        first = max(after, 0) + 1
        frames: list[tuple[int, str, str]] = []
        for i, raw in enumerate(answer[5:]):
            type_, payload = json.loads(raw)
            if payload is None:  # READY: numbered, never replayed
                return Replay(owner, last, None)
            frames.append((first + i, type_, payload))
        return Replay(owner, last, _frames_after(frames, after, last))

    async def keep(self, session_id: str, ttl: float, now: float, pos: str = "") -> int:
        return int(await self._keep(keys=[], args=[self.prefix, session_id, repr(now), ttl, pos]))

    async def existing(self, session_ids: list[str], now: float) -> set[str]:
        if not session_ids:
            return set()
        async with self.client.pipeline(transaction=False) as pipe:
            for sid in session_ids:
                pipe.hget(self._base(sid), "exp")
            expiries = await pipe.execute()
        return {sid for sid, exp in zip(session_ids, expiries, strict=True) if exp is not None and float(exp) > now}

    async def drop(self, session_ids: list[str]) -> None:
        if session_ids:
            keys = [k for sid in session_ids for k in (self._base(sid), self._base(sid) + ":buf",
                                                      self._base(sid) + ":ids")]
            await self.client.delete(*keys)
