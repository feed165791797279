"""Presence (docs/gateway.md, docs/scaling.md): activity keeps a hot `last_seen` value in the shared store (Redis
when configured), flushed to `users.last_seen_at` at most once a minute; the effective status is
`offline` for `invisible` or after more than 2 minutes without activity; a sweeper, run by one node at
a time, finds the users who just went offline and tells their friends.

Friends arrive with the social issue: until then `friends_of` finds nobody and the sweeper's
PRESENCE_UPDATE has no receiver, but the transitions are detected and reported.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from meadhall.accounts import queries
from meadhall.accounts.events import notify_went_offline
from meadhall.accounts.queries import UserRow
from meadhall.accounts.views import PRESENCE_TIMEOUT
from meadhall.core.clock import as_utc
from meadhall.runtime import Runtime

FLUSH_EVERY = 60.0  # seconds between database writes of one user's last_seen_at
SWEEP_EVERY = 30.0  # docs/gateway.md: at least every 30 s
HOT_TTL = 86_400.0


def _hot_key(user_id: int) -> str:
    return f"presence:seen:{user_id}"


# "Online in a client" (docs/gateway.md, docs/scaling.md): a gateway connection refreshes this mark with every
# heartbeat; it lapses one heartbeat timeout after the last connection went quiet, on every node alike.
IN_CLIENT_TTL = 45.0


async def touch(rt: Runtime, user_id: int, *, in_client: bool = False) -> None:
    """Record activity now (REST requests; gateway heartbeats, IDENTIFY and RESUME with `in_client`)."""
    now = rt.clock.timestamp()
    await rt.store.set(_hot_key(user_id), now, HOT_TTL, now)
    if in_client:
        await rt.store.set(f"presence:client:{user_id}", 1, IN_CLIENT_TTL, now)
        await rt.store.set(f"presence:client_seen:{user_id}", now, HOT_TTL, now)
    if await rt.store.set_nx(f"presence:flush:{user_id}", 1, FLUSH_EVERY, now):
        async with rt.uow() as uow:
            await queries.update_user(uow.conn, user_id, {"last_seen_at": rt.clock.now()})


async def in_client(rt: Runtime, user_id: int) -> bool:
    """Whether the user has an open gateway connection on any node (Web Push is skipped then)."""
    return await rt.store.get(f"presence:client:{user_id}", rt.clock.timestamp()) is not None


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


async def friends_of(_rt: Runtime, _user_id: int) -> list[int]:
    """The receivers of a user's PRESENCE_UPDATE (docs/gateway.md). No relationships exist yet."""
    return []


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
            for row in went_offline:
                receivers = await friends_of(rt, row["id"])
                if receivers:
                    uow.emit(notify_went_offline(row, now, receivers))
    return [row["id"] for row in went_offline]
