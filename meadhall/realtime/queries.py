"""SQL of the realtime layer: a guild's member ids (the audience of guild events) and the event outbox's
claims (realtime/outbox.py). Never commits."""

from __future__ import annotations

from sqlalchemy import RowMapping, delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import members
from meadhall.db.schema.outbox import event_outbox

_ANY_OUTBOX_ROW = select(event_outbox.c.id).limit(1)


async def select_guild_member_ids(conn: AsyncConnection, guild_id: int) -> list[int]:
    """Every member of the guild, user id ascending."""
    stmt = select(members.c.user_id).where(members.c.guild_id == guild_id).order_by(members.c.user_id)
    return list((await conn.execute(stmt)).scalars())


async def select_outbox_pending(conn: AsyncConnection) -> bool:
    """Whether any event waits in the outbox: one read of at most one key."""
    return (await conn.execute(_ANY_OUTBOX_ROW)).first() is not None


async def delete_outbox_batch(conn: AsyncConnection, batch: int) -> list[RowMapping]:
    """Claim (delete) the oldest `batch` rows, returning their id, created_at and body in id order."""
    stmt = (delete(event_outbox)
            .where(event_outbox.c.id.in_(select(event_outbox.c.id).order_by(event_outbox.c.id).limit(batch)))
            .returning(event_outbox.c.id, event_outbox.c.created_at, event_outbox.c.body))
    return sorted((await conn.execute(stmt)).mappings(), key=lambda row: row["id"])
