"""Presence (docs/gateway.md, docs/social.md, docs/scaling.md): activity keeps a hot `last_seen` value in the shared
store (Redis when configured), flushed to `users.last_seen_at` at most once a minute; the effective status is
`offline` for `invisible` or after more than 2 minutes without activity.

Friends hear of it by PRESENCE_UPDATE (docs/social.md, "Presence to friends"): when a user comes online after
being offline (activity after more than 2 minutes without any, or the first activity), when their public
profile or chosen status changes (the `public_change` hook of accounts/profile.py), and when the sweeper, run by
one node at a time, finds they went offline. Who the friends are is the social layer's knowledge: it fills
the `friends_lookup` hook at start (accounts lies below social and never imports it).

"Online in a client" (docs/push.md): the user has an open gateway connection on some node. Each
identified connection is an entry in the shared store (Redis when configured, this process's memory
otherwise), added at IDENTIFY/RESUME, removed as soon as its connection closes, and carrying a safety expiry
that its heartbeats renew: the entries of a node that died without closing anything lapse on their own.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts import queries
from meadhall.accounts.events import notify_presence, notify_went_offline
from meadhall.accounts.queries import UserRow
from meadhall.accounts.views import PRESENCE_TIMEOUT
from meadhall.core.clock import as_utc
from meadhall.core.hooks import Hook
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime

FLUSH_EVERY = 60.0  # seconds between database writes of one user's last_seen_at
SWEEP_EVERY = 30.0  # docs/gateway.md: at least every 30 s
HOT_TTL = 86_400.0
_TIMEOUT = PRESENCE_TIMEOUT.total_seconds()

# user ids -> each one's friends, in one query for all of them (the sweeper asks for many users at once).
# One answer each: the first lookup added is asked (one package fills each).
FriendsLookup = Callable[[AsyncConnection, Sequence[int]], Awaitable[dict[int, list[int]]]]
friends_lookup: Hook[FriendsLookup] = Hook()


# user ids -> each one's `friends`-scope style (a Style object), for those who set one; filled by the guilds
# layer, which owns styles (docs/customisation.md).
StyleLookup = Callable[[AsyncConnection, Sequence[int]], Awaitable[dict[int, dict[str, Any]]]]
style_lookup: Hook[StyleLookup] = Hook()


async def friends_styles(conn: AsyncConnection, user_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The `style` of each user's PRESENCE_UPDATE (none before guilds register)."""
    lookup = style_lookup.first()
    if lookup is None or not user_ids:
        return {}
    return await lookup(conn, user_ids)


async def friends_of(conn: AsyncConnection, user_ids: Sequence[int]) -> dict[int, list[int]]:
    """The receivers of each user's PRESENCE_UPDATE: their friends (nobody before social registers)."""
    lookup = friends_lookup.first()
    if lookup is None or not user_ids:
        return {}
    return await lookup(conn, user_ids)


def _hot_key(user_id: int) -> str:
    return f"presence:seen:{user_id}"


async def touch(rt: Runtime, user_id: int, *, in_client: bool = False, stored: bool = False) -> None:
    """Record activity now (gateway heartbeats, IDENTIFY and RESUME with `in_client`; the REST session
    refresh with `stored`, as it wrote `users.last_seen_at` itself). Activity after more than 2 minutes
    without any tells the friends that the user came online."""
    now = rt.clock.timestamp()
    hot = _hot_key(user_id)
    # The one store read added to activity: the previous value says whether this activity ends an offline
    # period. A REST request pays it only in its session's once-a-minute refresh, never per request.
    previous = await rt.store.get(hot, now)
    await rt.store.set(hot, now, HOT_TTL, now)
    if in_client:
        await rt.store.set(f"presence:client_seen:{user_id}", now, HOT_TTL, now)
    woke = previous is None or now - float(previous) > _TIMEOUT
    flush = not stored and await rt.store.set_nx(f"presence:flush:{user_id}", 1, FLUSH_EVERY, now)
    # Once per offline period, whichever node hears of the user first.
    if woke and await rt.store.set_nx(f"presence:online:{user_id}:{previous}", 1, _TIMEOUT, now):
        await _came_online(rt, user_id, write_seen=not stored)
    elif flush:
        async with rt.uow() as uow:
            await queries.update_user(uow.conn, user_id, {"last_seen_at": rt.clock.now()})


async def _came_online(rt: Runtime, user_id: int, *, write_seen: bool) -> None:
    """PRESENCE_UPDATE to the friends of a user who just came online; the column is written in the same
    transaction, so that every summary read afterwards (GET /users/{id}, READY) agrees with the event. An
    `invisible` user never comes online."""
    async with rt.uow() as uow:
        if write_seen:
            await queries.update_user(uow.conn, user_id, {"last_seen_at": uow.now})
        receivers = (await friends_of(uow.conn, [user_id])).get(user_id, [])
        if not receivers:
            return
        row = await queries.select_user(uow.conn, user_id)
        if row is None or row["deleted_at"] is not None or row["status"] == "invisible":
            return
        style = (await friends_styles(uow.conn, [user_id])).get(user_id)
        uow.emit(notify_presence(row, uow.now, receivers, style))


async def note_session_activity(rt: Runtime, user_id: int) -> None:
    """The REST path's activity (auth/sessions.py calls it from its once-a-minute session refresh)."""
    await touch(rt, user_id, stored=True)


async def announce_profile_to_friends(uow: UnitOfWork, row: UserRow) -> None:
    """The user's public summary changed (chosen status, custom status, profile fields, avatar; going
    `invisible` reads as going offline): PRESENCE_UPDATE to their friends, in the caller's transaction."""
    if row["deleted_at"] is not None:
        return
    user_id = row["id"]
    receivers = (await friends_of(uow.conn, [user_id])).get(user_id, [])
    if receivers:
        # `style_count`: no style of any scope, no lookup (the row is the one just written).
        # kept by trigger: see derived registry "style_count"
        style = (await friends_styles(uow.conn, [user_id])).get(user_id) if row["style_count"] else None
        uow.emit(notify_presence(row, uow.now, receivers, style))


# One entry per connection rather than one counter per user: a counter with a single expiry would keep a dead
# node's share alive for as long as another node's connection of the same user heartbeats.
_local_clients: weakref.WeakKeyDictionary[Runtime, dict[int, dict[str, float]]] = weakref.WeakKeyDictionary()


def _clients_key(rt: Runtime, user_id: int) -> str:
    return f"{rt.redis_prefix}:presence:clients:{user_id}"


async def client_opened(rt: Runtime, user_id: int, conn_id: str, expiry: float) -> None:
    """An identified gateway connection (IDENTIFY or RESUME): the user is online in a client until it closes,
    or until `expiry` seconds pass without `client_refreshed` (its node died)."""
    await _put_client(rt, user_id, conn_id, expiry, only_existing=False)


async def client_refreshed(rt: Runtime, user_id: int, conn_id: str, expiry: float) -> None:
    """A heartbeat of the connection renews its safety expiry (an entry already removed stays removed)."""
    await _put_client(rt, user_id, conn_id, expiry, only_existing=True)


async def _put_client(rt: Runtime, user_id: int, conn_id: str, expiry: float, *, only_existing: bool) -> None:
    now = rt.clock.timestamp()
    if rt.redis is None:
        entries = _local_clients.setdefault(rt, {}).setdefault(user_id, {})
        if not only_existing or conn_id in entries:
            entries[conn_id] = now + expiry
        for lapsed in [cid for cid, until in entries.items() if until < now]:
            del entries[lapsed]
        return
    key = _clients_key(rt, user_id)
    async with rt.redis.pipeline(transaction=False) as pipe:
        # Scored by the service-clock time each entry lapses; the key's own TTL only bounds the cleanup.
        pipe.zadd(key, {conn_id: now + expiry}, xx=only_existing)
        pipe.zremrangebyscore(key, "-inf", f"({now!r}")
        pipe.pexpire(key, int(expiry * 1000) + 60_000)
        await pipe.execute()


async def client_closed(rt: Runtime, user_id: int, conn_id: str) -> None:
    """The connection closed, cleanly or not: it stops counting at once, on every node."""
    if rt.redis is None:
        entries = _local_clients.get(rt, {}).get(user_id)
        if entries is not None:
            entries.pop(conn_id, None)
            if not entries:
                del _local_clients[rt][user_id]
        return
    await rt.redis.zrem(_clients_key(rt, user_id), conn_id)


async def in_client(rt: Runtime, user_id: int) -> bool:
    """Whether the user has an open gateway connection on any node (Web Push is skipped then). A gateway
    session kept only for RESUME has no connection and does not count."""
    now = rt.clock.timestamp()
    if rt.redis is None:
        return any(until >= now for until in _local_clients.get(rt, {}).get(user_id, {}).values())
    return int(await rt.redis.zcount(_clients_key(rt, user_id), repr(now), "+inf")) > 0


async def client_last_seen(rt: Runtime, user_id: int) -> float | None:
    """When (epoch seconds) a gateway connection of the user was last heard of on any node, or None:
    a call participant gone for longer than the resume window leaves the call (docs/social.md)."""
    seen = await rt.store.get(f"presence:client_seen:{user_id}", rt.clock.timestamp())
    return None if seen is None else float(seen)


async def last_seen(rt: Runtime, user_id: int, stored: datetime | None) -> datetime | None:
    """The freshest of the hot value and the database column."""
    stored = as_utc(stored)
    hot = await rt.store.get(_hot_key(user_id), rt.clock.timestamp())
    if hot is None:
        return stored
    hot_dt = datetime.fromtimestamp(float(hot), UTC)
    return hot_dt if stored is None or hot_dt > stored else stored


async def sweep(rt: Runtime) -> list[int]:
    """Users whose last activity passed the 2-minute mark since the previous sweep: each is reported
    once (PRESENCE_UPDATE `offline` to friends). Returns their ids."""
    now = rt.clock.now()
    # Candidates: database activity within the window in which a user can have just crossed the mark
    # (the column lags the hot value by up to FLUSH_EVERY; sweeps may run late).
    newest = now - PRESENCE_TIMEOUT
    oldest = newest - timedelta(seconds=FLUSH_EVERY + 10 * SWEEP_EVERY)
    async with rt.read() as uow:
        rows = await queries.select_visible_users_seen_since(uow.conn, oldest)
    went_offline: list[UserRow] = []
    ts = now.timestamp()
    for row in rows:
        seen = await last_seen(rt, row["id"], row["last_seen_at"])
        if seen is None or seen > newest:
            continue
        # Once per activity period, whichever node sweeps.
        if await rt.store.set_nx(f"presence:offline:{row['id']}:{seen.timestamp():.3f}", 1, 3600, ts):
            went_offline.append(row)
    if went_offline:
        async with rt.uow() as uow:
            friends = await friends_of(uow.conn, [row["id"] for row in went_offline])
            styles = await friends_styles(uow.conn, [row["id"] for row in went_offline if friends.get(row["id"])])
            for row in went_offline:
                if friends.get(row["id"]):
                    uow.emit(notify_went_offline(row, now, friends[row["id"]], styles.get(row["id"])))
    return [row["id"] for row in went_offline]



async def flush(rt: Runtime, user_ids: Sequence[int]) -> int:
    """A stopping node writes the hot `last_seen` of the given users (those it served) to the column, where
    the once-a-minute flush left it up to a minute behind: on a single node the hot values live in this
    process's memory and would be lost with it. Only users whose hot value is newer than the last flush
    (its throttle key still set) are written, in one transaction. Returns how many were written."""
    now = rt.clock.timestamp()
    due: list[tuple[int, float]] = []
    for user_id in user_ids:
        if await rt.store.get(f"presence:flush:{user_id}", now) is None:
            continue  # nothing since the last write, or never active
        hot = await rt.store.get(_hot_key(user_id), now)
        if hot is not None:
            due.append((user_id, float(hot)))
    if due:
        async with rt.uow() as uow:
            for user_id, seen in due:
                await queries.update_user(uow.conn, user_id, {"last_seen_at": datetime.fromtimestamp(seen, UTC)})
    return len(due)
