"""SQL for a guild's custom emojis (docs/customisation.md). Never commits."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TypedDict, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import emojis
from meadhall.guilds.members.queries import USER_GUILD_IDS
from meadhall.guilds.rows import grouped


class EmojiRow(TypedDict):
    id: int
    guild_id: int
    name: str
    name_norm: str
    file_id: int
    animated: bool
    creator_id: int | None
    created_at: datetime


_ORDER = (emojis.c.guild_id, emojis.c.id)
# READY's statement, built once: building it per call with the list of 100 guild ids to expand and bind cost
# more than running it.
_OF_USER_GUILDS = select(emojis).where(emojis.c.guild_id.in_(USER_GUILD_IDS)).order_by(*_ORDER)


async def select_emojis(conn: AsyncConnection, guild_id: int) -> list[EmojiRow]:
    stmt = select(emojis).where(emojis.c.guild_id == guild_id).order_by(*_ORDER)
    return cast("list[EmojiRow]", list((await conn.execute(stmt)).mappings()))


async def select_emojis_of_guilds(conn: AsyncConnection, guild_ids: Iterable[int]) -> dict[int, list[EmojiRow]]:
    """guild id -> its emojis, for many guilds in one query (READY)."""
    ids = sorted(set(guild_ids))
    out: dict[int, list[EmojiRow]] = {guild_id: [] for guild_id in ids}
    if ids:
        stmt = select(emojis).where(emojis.c.guild_id.in_(ids)).order_by(*_ORDER)
        for row in (await conn.execute(stmt)).mappings():
            out[row["guild_id"]].append(cast("EmojiRow", row))
    return out


async def select_emojis_of_user_guilds(conn: AsyncConnection, user_id: int) -> dict[int, list[EmojiRow]]:
    """guild id -> its emojis, for every guild the user is a member of, in one query (READY); a guild
    without any is absent."""
    return grouped((await conn.execute(_OF_USER_GUILDS, {"user_id": user_id})).mappings(), "guild_id")


async def select_emoji(conn: AsyncConnection, guild_id: int, emoji_id: int) -> EmojiRow | None:
    stmt = select(emojis).where(emojis.c.guild_id == guild_id, emojis.c.id == emoji_id)
    return cast("EmojiRow | None", (await conn.execute(stmt)).mappings().first())


async def select_emoji_by_id(conn: AsyncConnection, emoji_id: int) -> EmojiRow | None:
    """An emoji of any guild: a custom emoji in a reaction names only its id."""
    stmt = select(emojis).where(emojis.c.id == emoji_id)
    return cast("EmojiRow | None", (await conn.execute(stmt)).mappings().first())


async def count_emojis(conn: AsyncConnection, guild_id: int) -> int:
    stmt = select(func.count()).select_from(emojis).where(emojis.c.guild_id == guild_id)
    return int((await conn.execute(stmt)).scalar_one())


async def name_taken(conn: AsyncConnection, guild_id: int, name_norm: str, except_id: int | None = None) -> bool:
    stmt = select(emojis.c.id).where(emojis.c.guild_id == guild_id, emojis.c.name_norm == name_norm)
    if except_id is not None:
        stmt = stmt.where(emojis.c.id != except_id)
    return (await conn.execute(stmt.limit(1))).first() is not None


async def insert_emoji(conn: AsyncConnection, row: EmojiRow) -> None:
    await conn.execute(insert(emojis).values(dict(row)))


async def update_emoji_name(conn: AsyncConnection, guild_id: int, emoji_id: int, name: str, name_norm: str) -> None:
    await conn.execute(update(emojis).where(emojis.c.guild_id == guild_id, emojis.c.id == emoji_id)
                       .values(name=name, name_norm=name_norm))


async def delete_emoji_row(conn: AsyncConnection, guild_id: int, emoji_id: int) -> None:
    await conn.execute(delete(emojis).where(emojis.c.guild_id == guild_id, emojis.c.id == emoji_id))
