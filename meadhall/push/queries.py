"""SQL of Web Push (docs/push.md): subscriptions, always scoped by their user except where an endpoint is looked up
to re-assign it or a delivery outcome is recorded by id; and the outbox of notifications waiting for delivery."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db import dialect
from meadhall.db.schema import push_subscriptions as t
from meadhall.db.schema import sessions, users
from meadhall.db.schema.push_outbox import push_outbox as o


class SubscriptionRow(TypedDict):
    id: int
    user_id: int
    session_id: int
    endpoint: str
    p256dh: str
    auth: str
    created_at: datetime
    failure_count: int
    last_delivery_at: datetime | None


class DeliveryRow(SubscriptionRow):
    locale: str  # the recipient's: the notification's words are in their language


def _row(mapping: Any) -> SubscriptionRow:
    return SubscriptionRow(**mapping)  # type: ignore[typeddict-item]  # the table's columns


async def select_subscriptions(conn: AsyncConnection, user_id: int) -> list[SubscriptionRow]:
    rows = await conn.execute(select(t).where(t.c.user_id == user_id).order_by(t.c.id))
    return [_row(r) for r in rows.mappings()]


async def select_subscriptions_of(conn: AsyncConnection, user_ids: list[int], used_after: datetime
                                  ) -> list[DeliveryRow]:
    """The subscriptions to deliver to, each with its user's locale: never those of a banned or deleted account,
    nor those of a session unused since `used_after` (expired: its row goes only when its token is next
    presented; docs/push.md)."""
    rows = await conn.execute(
        select(t, users.c.locale).join(users, users.c.id == t.c.user_id)
        .join(sessions, sessions.c.id == t.c.session_id)
        .where(t.c.user_id.in_(user_ids), users.c.banned_at.is_(None), users.c.deleted_at.is_(None),
               sessions.c.last_used_at > used_after)
        .order_by(t.c.id))
    return [DeliveryRow(**r) for r in rows.mappings()]  # type: ignore[typeddict-item]  # the columns + locale


async def count_subscriptions(conn: AsyncConnection, user_id: int) -> int:
    return int((await conn.execute(select(func.count()).select_from(t).where(t.c.user_id == user_id))).scalar_one())


async def select_by_endpoint(conn: AsyncConnection, endpoint: str) -> SubscriptionRow | None:
    row = (await conn.execute(select(t).where(t.c.endpoint == endpoint))).mappings().first()
    return None if row is None else _row(row)


async def insert_subscription(conn: AsyncConnection, row: SubscriptionRow) -> bool:
    """False when the endpoint was stored meanwhile (the same browser subscribing twice at once)."""
    result = await conn.execute(dialect.insert_ignore(conn, t, dict(row)))
    return bool(result.rowcount)


async def update_subscription_owner(conn: AsyncConnection, subscription_id: int, user_id: int, session_id: int,
                                    p256dh: str, auth: str, now: datetime) -> None:
    """An endpoint subscribed again (by its owner or someone else on the same browser) starts afresh, and
    belongs to the session that subscribed it now."""
    await conn.execute(update(t).where(t.c.id == subscription_id).values(
        user_id=user_id, session_id=session_id, p256dh=p256dh, auth=auth, created_at=now, failure_count=0,
        last_delivery_at=None))


async def delete_user_subscription(conn: AsyncConnection, user_id: int, endpoint: str) -> bool:
    result = await conn.execute(delete(t).where(t.c.user_id == user_id, t.c.endpoint == endpoint))
    return bool(result.rowcount)


async def delete_subscription(conn: AsyncConnection, subscription_id: int) -> None:
    await conn.execute(delete(t).where(t.c.id == subscription_id))


async def update_delivered(conn: AsyncConnection, subscription_id: int, now: datetime) -> None:
    await conn.execute(update(t).where(t.c.id == subscription_id).values(failure_count=0, last_delivery_at=now))


async def update_failed(conn: AsyncConnection, subscription_id: int) -> int | None:
    """One more consecutive failure; the new count (None when the subscription is gone)."""
    await conn.execute(update(t).where(t.c.id == subscription_id).values(failure_count=t.c.failure_count + 1))
    count = (await conn.execute(select(t.c.failure_count).where(t.c.id == subscription_id))).scalar_one_or_none()
    return None if count is None else int(count)


async def delete_subscriptions_of(conn: AsyncConnection, user_id: int) -> int:
    """Every subscription of the user (soft deletion of the account, docs/admin.md)."""
    result = await conn.execute(delete(t).where(t.c.user_id == user_id))
    return int(result.rowcount or 0)


# ---- the outbox (push/delivery.py, docs/push.md "A durable queue") ----------------------------------------------

class OutboxRow(TypedDict):
    id: int
    created_at: datetime
    attempts: int
    body: str


_OUT_INSERT = insert(o)
_OUT_ANY = select(o.c.id).where(o.c.available_at <= bindparam("now")).limit(1)
# SKIP LOCKED: a node claiming passes over rows another node is claiming at that moment instead of waiting for
# them (PostgreSQL; SQLite's compiler leaves the clause out, and its writers take turns anyway).
_OUT_CLAIM = (
    update(o)
    .where(o.c.id.in_(select(o.c.id).where(o.c.available_at <= bindparam("now")).order_by(o.c.id)
                      .limit(bindparam("n")).with_for_update(skip_locked=True).scalar_subquery()))
    .values(claimed_by=bindparam("me"), available_at=bindparam("until"), attempts=o.c.attempts + 1)
    .returning(o.c.id, o.c.created_at, o.c.attempts, o.c.body)
)
_OUT_DONE = delete(o).where(o.c.id.in_(bindparam("ids", expanding=True)), o.c.claimed_by == bindparam("me"))
_OUT_RENEW = update(o).where(o.c.id.in_(bindparam("ids", expanding=True)), o.c.claimed_by == bindparam("me")
                             ).values(available_at=bindparam("until"))
_OUT_NEWEST_BEYOND = select(o.c.id).order_by(o.c.id.desc()).offset(bindparam("keep")).limit(1)
_OUT_TRIM = delete(o).where(o.c.id <= bindparam("last"))


async def insert_outbox(conn: AsyncConnection, row_id: int, now: datetime, body: str) -> None:
    await conn.execute(_OUT_INSERT, {"id": row_id, "created_at": now, "available_at": now, "claimed_by": None,
                                     "attempts": 0, "body": body})


async def any_claimable(conn: AsyncConnection, now: datetime) -> bool:
    """The idle poll: one indexed read of at most one key."""
    return (await conn.execute(_OUT_ANY, {"now": now})).first() is not None


async def claim_outbox(conn: AsyncConnection, me: str, now: datetime, until: datetime, n: int) -> list[OutboxRow]:
    """At most `n` claimable rows, oldest first, held by `me` until `until`."""
    rows = await conn.execute(_OUT_CLAIM, {"now": now, "n": n, "me": me, "until": until})
    return sorted((OutboxRow(id=r.id, created_at=r.created_at, attempts=r.attempts, body=r.body) for r in rows),
                  key=lambda r: r["id"])


async def delete_outbox_rows(conn: AsyncConnection, me: str, ids: list[int]) -> int:
    """Rows `me` still holds (a row whose lease ran out and that another node claimed is its to delete)."""
    return int((await conn.execute(_OUT_DONE, {"me": me, "ids": ids})).rowcount or 0)


async def update_outbox_leases(conn: AsyncConnection, me: str, ids: list[int], until: datetime) -> int:
    """Move the lease of the rows `me` holds (renewed while it delivers; `until` = now gives them up at once)."""
    return int((await conn.execute(_OUT_RENEW, {"me": me, "ids": ids, "until": until})).rowcount or 0)


async def select_outbox_beyond(conn: AsyncConnection, keep: int) -> int | None:
    """The newest row older than the newest `keep` (None when there are at most `keep`)."""
    last = (await conn.execute(_OUT_NEWEST_BEYOND, {"keep": keep})).scalar_one_or_none()
    return None if last is None else int(last)


async def delete_outbox_through(conn: AsyncConnection, last: int) -> int:
    """That row and every older one."""
    return int((await conn.execute(_OUT_TRIM, {"last": last})).rowcount or 0)
