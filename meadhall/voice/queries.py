"""SQL of the voice rooms: the media-server webhook journal and the accounts that may not be in voice."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db import dialect
from meadhall.db.schema import media_webhook_events, users


async def insert_webhook_event(conn: AsyncConnection, event_id: str, kind: str, room: str | None,
                               now: datetime) -> bool:
    """Journal a processed event; False when its id was journaled before (a repeat)."""
    stmt = dialect.insert_ignore(conn, media_webhook_events,
                                 {"id": event_id, "event": kind, "room": room, "received_at": now})
    result = await conn.execute(stmt)
    return bool(result.rowcount)


async def select_webhook_event(conn: AsyncConnection, event_id: str) -> bool:
    found = await conn.execute(select(media_webhook_events.c.id).where(media_webhook_events.c.id == event_id))
    return found.first() is not None


async def delete_webhook_events_before(conn: AsyncConnection, cutoff: datetime) -> int:
    result = await conn.execute(delete(media_webhook_events).where(media_webhook_events.c.received_at < cutoff))
    return int(result.rowcount or 0)


async def select_barred_users(conn: AsyncConnection, user_ids: Sequence[int]) -> set[int]:
    """Those of the users whose account is instance-banned, deleted or gone."""
    ids = sorted(set(user_ids))
    if not ids:
        return set()
    rows = (await conn.execute(select(users.c.id, users.c.banned_at, users.c.deleted_at)
                               .where(users.c.id.in_(ids)))).all()
    fine = {r[0] for r in rows if r[1] is None and r[2] is None}
    return set(ids) - fine


