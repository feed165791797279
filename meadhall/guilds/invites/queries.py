"""SQL for invitations. An invitation that is expired or used up
no longer exists: every read here sees only live invitations. Never commits."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import ColumnElement, and_, delete, func, insert, not_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import invites
from meadhall.guilds.rows import InviteRow


def _live(now: datetime) -> ColumnElement[bool]:
    return and_(
        or_(invites.c.expires_at.is_(None), invites.c.expires_at > now),
        or_(invites.c.max_uses == 0, invites.c.uses < invites.c.max_uses),
    )


async def select_invite_code_taken(conn: AsyncConnection, code: str) -> bool:
    return (await conn.execute(select(invites.c.code).where(invites.c.code == code))).first() is not None


async def select_invite(conn: AsyncConnection, code: str) -> InviteRow | None:
    """The invitation by code, live or not."""
    return cast("InviteRow | None", (await conn.execute(select(invites).where(invites.c.code == code))).mappings().first())


async def insert_invite_row(conn: AsyncConnection, row: InviteRow) -> None:
    await conn.execute(insert(invites).values(dict(row)))


async def delete_public_invite(conn: AsyncConnection, guild_id: int) -> None:
    await conn.execute(delete(invites).where(invites.c.guild_id == guild_id, invites.c.is_public.is_(True)))


async def select_live_invite(conn: AsyncConnection, code: str, now: datetime) -> InviteRow | None:
    stmt = select(invites).where(invites.c.code == code, _live(now))
    return cast("InviteRow | None", (await conn.execute(stmt)).mappings().first())


async def select_live_invites(conn: AsyncConnection, guild_id: int, now: datetime) -> list[InviteRow]:
    """Newest first; the code breaks ties of invitations created in the same instant."""
    stmt = (
        select(invites)
        .where(invites.c.guild_id == guild_id, _live(now))
        .order_by(invites.c.created_at.desc(), invites.c.code)
    )
    return cast("list[InviteRow]", list((await conn.execute(stmt)).mappings()))


async def count_live_invites(conn: AsyncConnection, guild_id: int, now: datetime) -> int:
    stmt = select(func.count()).select_from(invites).where(invites.c.guild_id == guild_id, _live(now))
    return int((await conn.execute(stmt)).scalar_one())


async def delete_dead_invites(conn: AsyncConnection, guild_id: int, now: datetime) -> None:
    """Drop the guild's expired and used-up rows, which no longer exist for any reader."""
    await conn.execute(delete(invites).where(invites.c.guild_id == guild_id, not_(_live(now))))


async def update_invite_use(conn: AsyncConnection, code: str, now: datetime) -> bool:
    """`uses + 1` only while the invitation is live, in one statement: two joiners racing for the last
    use cannot both get it."""
    result = await conn.execute(
        update(invites).where(invites.c.code == code, _live(now)).values(uses=invites.c.uses + 1)
    )
    return result.rowcount == 1


async def delete_invite_row(conn: AsyncConnection, code: str) -> None:
    await conn.execute(delete(invites).where(invites.c.code == code))


async def update_invite_background(conn: AsyncConnection, code: str, file_id: int | None) -> None:
    await conn.execute(update(invites).where(invites.c.code == code).values(background_file_id=file_id))


async def select_public_invite_room(conn: AsyncConnection, guild_id: int) -> int | None:
    stmt = select(invites.c.channel_id).where(invites.c.guild_id == guild_id, invites.c.is_public.is_(True))
    return (await conn.execute(stmt)).scalar()


async def update_public_invite_room(conn: AsyncConnection, guild_id: int, from_channel: int, to_channel: int) -> None:
    await conn.execute(
        update(invites)
        .where(invites.c.guild_id == guild_id, invites.c.is_public.is_(True), invites.c.channel_id == from_channel)
        .values(channel_id=to_channel)
    )
