"""SQL of the soft deletion (docs/admin.md "Soft deletion"): the target's row under its lock and the servers
it owns. Never commits."""

from __future__ import annotations

from typing import cast

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import UserRow
from meadhall.db.schema import dm_participants, guilds, members, users


async def select_user_locked(conn: AsyncConnection, user_id: int) -> UserRow | None:
    """The row, locked: two deletions of one account (or a deletion and a ban) run one after the other."""
    stmt = select(users).where(users.c.id == user_id).with_for_update()
    return cast("UserRow | None", (await conn.execute(stmt)).mappings().first())


async def select_owned_guild_ids(conn: AsyncConnection, user_id: int) -> list[int]:
    stmt = select(guilds.c.id).where(guilds.c.owner_id == user_id).order_by(guilds.c.id)
    return [int(i) for i in (await conn.execute(stmt)).scalars()]


async def select_member_guild_ids(conn: AsyncConnection, user_id: int) -> list[int]:
    stmt = select(members.c.guild_id).where(members.c.user_id == user_id).order_by(members.c.guild_id)
    return [int(i) for i in (await conn.execute(stmt)).scalars()]


async def select_conversation_ids(conn: AsyncConnection, user_id: int) -> list[int]:
    """The conversations the user takes part in, in id order (the order their locks are taken in)."""
    stmt = (select(dm_participants.c.channel_id).where(dm_participants.c.user_id == user_id)
            .order_by(dm_participants.c.channel_id))
    return [int(i) for i in (await conn.execute(stmt)).scalars()]
