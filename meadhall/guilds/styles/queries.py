"""SQL for personal styles and the cosmetics available to a user (docs/customisation.md). Never commits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TypedDict, cast

from sqlalchemy import bindparam, delete, or_, select, union
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db import dialect
from meadhall.db.dialect import upsert
from meadhall.db.schema import member_roles, members, roles, user_styles

FRIENDS = 0  # scope_key of the `friends` scope


class StyleRow(TypedDict):
    user_id: int
    scope_key: int
    guild_id: int | None
    frame_id: int | None
    icon_id: int | None
    color: int | None
    updated_at: datetime


async def select_styles(conn: AsyncConnection, user_id: int) -> list[StyleRow]:
    stmt = select(user_styles).where(user_styles.c.user_id == user_id).order_by(user_styles.c.scope_key)
    return cast("list[StyleRow]", list((await conn.execute(stmt)).mappings()))


# Built once, as every status change runs both (building one cost more than running it).
_GUILD_STYLES_OF_USER = (select(user_styles)
                         .where(user_styles.c.user_id == bindparam("user_id"), user_styles.c.scope_key != FRIENDS)
                         .order_by(user_styles.c.scope_key))
_FRIENDS_STYLES = dialect.IdsBound(lambda ids_in: select(user_styles).where(
    user_styles.c.scope_key == FRIENDS, ids_in(user_styles.c.user_id)))


async def select_guild_styles_of_user(conn: AsyncConnection, user_id: int) -> dict[int, StyleRow]:
    """guild id -> one user's guild-scope style, for every guild where they set one."""
    found = (await conn.execute(_GUILD_STYLES_OF_USER, {"user_id": user_id})).mappings()
    return {r["scope_key"]: cast(StyleRow, r) for r in found}


async def select_friends_styles(conn: AsyncConnection, user_ids: Sequence[int]) -> dict[int, StyleRow]:
    """user id -> friends-scope style, for those of `user_ids` (sorted, distinct) who set one."""
    found = (await _FRIENDS_STYLES.execute(conn, user_ids)).mappings()
    return {int(r["user_id"]): cast(StyleRow, r) for r in found}


async def select_guild_styles(conn: AsyncConnection, guild_id: int, user_ids: Iterable[int]) -> dict[int, StyleRow]:
    """user id -> guild-scope style, for the given members of one guild."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    stmt = select(user_styles).where(user_styles.c.scope_key == guild_id, user_styles.c.user_id.in_(ids))
    return {int(r["user_id"]): cast(StyleRow, r) for r in (await conn.execute(stmt)).mappings()}


async def upsert_style(conn: AsyncConnection, row: StyleRow) -> None:
    await conn.execute(upsert(conn, user_styles, dict(row), ["user_id", "scope_key"],
                              ["guild_id", "frame_id", "icon_id", "color", "updated_at"]))


async def delete_style(conn: AsyncConnection, user_id: int, scope_key: int) -> bool:
    result = await conn.execute(delete(user_styles).where(user_styles.c.user_id == user_id,
                                                          user_styles.c.scope_key == scope_key))
    return bool(result.rowcount)


async def select_role_cosmetic_ids(conn: AsyncConnection, user_ids: Iterable[int], guild_id: int | None = None
                                   ) -> dict[tuple[int, int], set[int]]:
    """(user id, guild id) -> ids of the cosmetics the roles they hold there show (frames and icons), over
    the roles they were given and the guild's default role, which every member holds; one query."""
    ids = sorted(set(user_ids))
    out: dict[tuple[int, int], set[int]] = defaultdict(set)
    if not ids:
        return out
    shows = or_(roles.c.frame_id.is_not(None), roles.c.icon_id.is_not(None))
    given = (select(member_roles.c.user_id, roles.c.guild_id, roles.c.frame_id, roles.c.icon_id)
             .join(roles, roles.c.id == member_roles.c.role_id)
             .where(member_roles.c.user_id.in_(ids), shows))
    default = (select(members.c.user_id, roles.c.guild_id, roles.c.frame_id, roles.c.icon_id)
               .join(roles, roles.c.id == members.c.guild_id)
               .where(members.c.user_id.in_(ids), shows))
    if guild_id is not None:
        given = given.where(member_roles.c.guild_id == guild_id)
        default = default.where(members.c.guild_id == guild_id)
    for user_id, g, frame_id, icon_id in (await conn.execute(union(given, default))).all():
        for item in (frame_id, icon_id):
            if item is not None:
                out[(int(user_id), int(g))].add(int(item))
    return out


async def select_styled_members(conn: AsyncConnection, guild_id: int, user_ids: Iterable[int] | None = None,
                                item_id: int | None = None) -> list[int]:
    """Members with a guild-scope style in this guild (among `user_ids`; choosing `item_id`, when given):
    whose Member `style` may change when a role's cosmetics or the gallery change."""
    stmt = select(user_styles.c.user_id).where(user_styles.c.scope_key == guild_id)
    if user_ids is not None:
        stmt = stmt.where(user_styles.c.user_id.in_(sorted(set(user_ids))))
    if item_id is not None:
        stmt = stmt.where(or_(user_styles.c.frame_id == item_id, user_styles.c.icon_id == item_id))
    return sorted(int(u) for u in (await conn.execute(stmt)).scalars())


async def delete_styles_of(conn: AsyncConnection, user_id: int) -> int:
    """Every personal style of the user, all scopes (soft deletion of the account, docs/admin.md)."""
    result = await conn.execute(delete(user_styles).where(user_styles.c.user_id == user_id))
    return int(result.rowcount or 0)
