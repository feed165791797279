"""SQL for guild rows (house rule 6: child lookups are scoped by their parent). Never commits."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import bindparam, delete, exists, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.text import escape_like
from meadhall.db.schema import (
    guilds,
    members,
)
from meadhall.guilds.rows import GuildRow

# ---- guilds ------------------------------------------------------------------------------------


async def select_guild(conn: AsyncConnection, guild_id: int) -> GuildRow | None:
    # Typed by a cast, not a copy (guilds/rows.py): every guild request starts here.
    return cast("GuildRow | None", (await conn.execute(_GET_GUILD, {"guild_id": guild_id})).mappings().first())


async def lock_guild(conn: AsyncConnection, guild_id: int) -> None:
    """Serialise changes that renumber or count a guild's rows (PostgreSQL row lock; SQLite writers are
    serial already and ignore FOR UPDATE)."""
    await conn.execute(select(guilds.c.id).where(guilds.c.id == guild_id).with_for_update())


async def insert_guild(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(guilds).values(values))


async def update_guild_row(conn: AsyncConnection, guild_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(guilds).where(guilds.c.id == guild_id).values(values))


async def delete_guild_row(conn: AsyncConnection, guild_id: int) -> None:
    await conn.execute(delete(guilds).where(guilds.c.id == guild_id))


# Built once (READY runs it): building it per call cost about a fifth of its run for 100 guilds.
_GUILDS_OF_USER = (select(guilds).join(members, members.c.guild_id == guilds.c.id)
                   .where(members.c.user_id == bindparam("user_id")).order_by(members.c.joined_at, guilds.c.id))


async def select_main_guild_exists(conn: AsyncConnection) -> bool:
    return bool((await conn.execute(select(exists().where(guilds.c.is_main.is_(True))))).scalar())


async def select_main_guild_name(conn: AsyncConnection) -> str | None:
    """The main server's name when that server is public (the installable app is named after it, and the
    manifest is read without signing in: a private community's name is not published), else None."""
    name = (await conn.execute(select(guilds.c.name).where(guilds.c.is_main.is_(True), guilds.c.public.is_(True))
                               .order_by(guilds.c.id).limit(1))).scalar()
    return None if name is None else str(name)


async def select_public_guilds(conn: AsyncConnection, name_part_norm: str | None, before: int | None, limit: int
                               ) -> list[GuildRow]:
    """Public guilds newest first, below `before`, whose casefolded name holds `name_part_norm` (LIKE
    wildcards in it taken literally)."""
    stmt = select(guilds).where(guilds.c.public.is_(True))
    if name_part_norm is not None:
        stmt = stmt.where(guilds.c.name_norm.like("%" + escape_like(name_part_norm) + "%", escape="\\"))
    if before is not None:
        stmt = stmt.where(guilds.c.id < before)
    stmt = stmt.order_by(guilds.c.id.desc()).limit(limit)
    return cast("list[GuildRow]", list((await conn.execute(stmt)).mappings()))


async def select_member_guild_ids(conn: AsyncConnection, user_id: int, guild_ids: list[int]) -> set[int]:
    """Those of `guild_ids` the user is a member of."""
    stmt = select(members.c.guild_id).where(members.c.user_id == user_id, members.c.guild_id.in_(guild_ids))
    return set((await conn.execute(stmt)).scalars())


async def select_guilds_of_user(conn: AsyncConnection, user_id: int) -> list[GuildRow]:
    return cast("list[GuildRow]", list((await conn.execute(_GUILDS_OF_USER, {"user_id": user_id})).mappings()))


async def update_member_count(conn: AsyncConnection, guild_id: int, delta: int) -> None:
    await conn.execute(
        update(guilds).where(guilds.c.id == guild_id).values(member_count=guilds.c.member_count + delta)
    )


_GET_GUILD = select(guilds).where(guilds.c.id == bindparam("guild_id"))
