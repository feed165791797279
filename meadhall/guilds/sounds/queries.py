"""SQL for a guild's sounds (docs/customisation.md). Never commits."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import sounds
from meadhall.guilds.members.queries import USER_GUILD_IDS
from meadhall.guilds.rows import grouped


class SoundRow(TypedDict):
    id: int
    guild_id: int
    kind: str
    name: str
    name_norm: str
    emoji: str | None
    palette_event: str | None
    file_id: int
    duration_ms: int | None
    creator_id: int | None
    created_at: datetime


_ORDER = (sounds.c.guild_id, sounds.c.id)
# READY's statement, built once: building it per call with the list of 100 guild ids to expand and bind cost
# more than running it.
_OF_USER_GUILDS = select(sounds).where(sounds.c.guild_id.in_(USER_GUILD_IDS)).order_by(*_ORDER)


async def select_sounds(conn: AsyncConnection, guild_id: int, kind: str | None = None) -> list[SoundRow]:
    stmt = select(sounds).where(sounds.c.guild_id == guild_id)
    if kind is not None:
        stmt = stmt.where(sounds.c.kind == kind)
    return cast("list[SoundRow]", list((await conn.execute(stmt.order_by(*_ORDER))).mappings()))


async def select_sounds_of_guilds(conn: AsyncConnection, guild_ids: Iterable[int]) -> dict[int, list[SoundRow]]:
    """guild id -> its sounds, for many guilds in one query (READY)."""
    ids = sorted(set(guild_ids))
    out: dict[int, list[SoundRow]] = {guild_id: [] for guild_id in ids}
    if ids:
        stmt = select(sounds).where(sounds.c.guild_id.in_(ids)).order_by(*_ORDER)
        for row in (await conn.execute(stmt)).mappings():
            out[row["guild_id"]].append(cast("SoundRow", row))
    return out


async def select_sounds_of_user_guilds(conn: AsyncConnection, user_id: int) -> dict[int, list[SoundRow]]:
    """guild id -> its sounds, for every guild the user is a member of, in one query (READY); a guild
    without any is absent."""
    return grouped((await conn.execute(_OF_USER_GUILDS, {"user_id": user_id})).mappings(), "guild_id")


async def select_sound(conn: AsyncConnection, guild_id: int, sound_id: int) -> SoundRow | None:
    stmt = select(sounds).where(sounds.c.guild_id == guild_id, sounds.c.id == sound_id)
    return cast("SoundRow | None", (await conn.execute(stmt)).mappings().first())


async def count_sounds(conn: AsyncConnection, guild_id: int, kind: str) -> int:
    stmt = select(func.count()).select_from(sounds).where(sounds.c.guild_id == guild_id, sounds.c.kind == kind)
    return int((await conn.execute(stmt)).scalar_one())


async def name_taken(conn: AsyncConnection, guild_id: int, kind: str, name_norm: str,
                     except_id: int | None = None) -> bool:
    stmt = select(sounds.c.id).where(sounds.c.guild_id == guild_id, sounds.c.kind == kind,
                                     sounds.c.name_norm == name_norm)
    if except_id is not None:
        stmt = stmt.where(sounds.c.id != except_id)
    return (await conn.execute(stmt.limit(1))).first() is not None


async def palette_event_taken(conn: AsyncConnection, guild_id: int, palette_event: str,
                              except_id: int | None = None) -> bool:
    stmt = select(sounds.c.id).where(sounds.c.guild_id == guild_id, sounds.c.palette_event == palette_event)
    if except_id is not None:
        stmt = stmt.where(sounds.c.id != except_id)
    return (await conn.execute(stmt.limit(1))).first() is not None


async def insert_sound(conn: AsyncConnection, row: SoundRow) -> None:
    await conn.execute(insert(sounds).values(dict(row)))


async def update_sound_row(conn: AsyncConnection, guild_id: int, sound_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(sounds).where(sounds.c.guild_id == guild_id, sounds.c.id == sound_id).values(values))


async def delete_sound_row(conn: AsyncConnection, guild_id: int, sound_id: int) -> None:
    await conn.execute(delete(sounds).where(sounds.c.guild_id == guild_id, sounds.c.id == sound_id))
