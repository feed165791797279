"""SQL for a guild's cosmetics gallery (docs/customisation.md). Never commits."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TypedDict, cast

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import cosmetics, roles
from meadhall.guilds.members.queries import USER_GUILD_IDS
from meadhall.guilds.rows import grouped


class CosmeticRow(TypedDict):
    id: int
    guild_id: int
    kind: str
    name: str
    file_id: int
    created_at: datetime


_ORDER = (cosmetics.c.guild_id, cosmetics.c.id)
# READY's statement, built once: building it per call with the list of 100 guild ids to expand and bind cost
# more than running it.
_OF_USER_GUILDS = select(cosmetics).where(cosmetics.c.guild_id.in_(USER_GUILD_IDS)).order_by(*_ORDER)


async def select_cosmetics(conn: AsyncConnection, guild_id: int, kind: str | None = None) -> list[CosmeticRow]:
    stmt = select(cosmetics).where(cosmetics.c.guild_id == guild_id)
    if kind is not None:
        stmt = stmt.where(cosmetics.c.kind == kind)
    return cast("list[CosmeticRow]", list((await conn.execute(stmt.order_by(*_ORDER))).mappings()))


async def select_cosmetics_of_guilds(conn: AsyncConnection, guild_ids: Iterable[int]
                                     ) -> dict[int, list[CosmeticRow]]:
    """guild id -> its gallery, for many guilds in one query (READY, personal styles)."""
    ids = sorted(set(guild_ids))
    out: dict[int, list[CosmeticRow]] = {guild_id: [] for guild_id in ids}
    if ids:
        stmt = select(cosmetics).where(cosmetics.c.guild_id.in_(ids)).order_by(*_ORDER)
        for row in (await conn.execute(stmt)).mappings():
            out[row["guild_id"]].append(cast("CosmeticRow", row))
    return out


async def select_cosmetics_of_user_guilds(conn: AsyncConnection, user_id: int) -> dict[int, list[CosmeticRow]]:
    """guild id -> its gallery, for every guild the user is a member of, in one query (READY); a guild
    without any is absent."""
    return grouped((await conn.execute(_OF_USER_GUILDS, {"user_id": user_id})).mappings(), "guild_id")


async def select_cosmetic(conn: AsyncConnection, guild_id: int, cosmetic_id: int) -> CosmeticRow | None:
    stmt = select(cosmetics).where(cosmetics.c.guild_id == guild_id, cosmetics.c.id == cosmetic_id)
    return cast("CosmeticRow | None", (await conn.execute(stmt)).mappings().first())


async def count_cosmetics(conn: AsyncConnection, guild_id: int) -> int:
    stmt = select(func.count()).select_from(cosmetics).where(cosmetics.c.guild_id == guild_id)
    return int((await conn.execute(stmt)).scalar_one())


async def insert_cosmetic(conn: AsyncConnection, row: CosmeticRow) -> None:
    await conn.execute(insert(cosmetics).values(dict(row)))


async def update_cosmetic_name(conn: AsyncConnection, guild_id: int, cosmetic_id: int, name: str) -> None:
    await conn.execute(update(cosmetics).where(cosmetics.c.guild_id == guild_id, cosmetics.c.id == cosmetic_id)
                       .values(name=name))


async def delete_cosmetic_row(conn: AsyncConnection, guild_id: int, cosmetic_id: int) -> None:
    await conn.execute(delete(cosmetics).where(cosmetics.c.guild_id == guild_id, cosmetics.c.id == cosmetic_id))


async def clear_role_cosmetic(conn: AsyncConnection, guild_id: int, cosmetic_id: int) -> list[int]:
    """Roles of the guild that point at the cosmetic lose it (frame or icon); returns their ids."""
    stmt = select(roles.c.id).where(roles.c.guild_id == guild_id,
                                    or_(roles.c.frame_id == cosmetic_id, roles.c.icon_id == cosmetic_id))
    ids = [int(i) for i in (await conn.execute(stmt)).scalars()]
    if ids:
        for column in ("frame_id", "icon_id"):
            await conn.execute(update(roles).where(roles.c.guild_id == guild_id, roles.c[column] == cosmetic_id)
                               .values({column: None}))
    return ids


async def select_cosmetics_by_ids(conn: AsyncConnection, ids: Iterable[int]) -> dict[int, CosmeticRow]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    stmt = select(cosmetics).where(cosmetics.c.id.in_(wanted)).order_by(*_ORDER)
    return {int(r["id"]): cast(CosmeticRow, r) for r in (await conn.execute(stmt)).mappings()}
