"""SQL for rooms, categories and their permission overrides. Never commits."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

from sqlalchemy import and_, bindparam, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import UserRow
from meadhall.db.schema import (
    channels,
    guilds,
    permission_overrides,
    users,
)
from meadhall.guilds.members.queries import USER_GUILD_IDS
from meadhall.guilds.rows import ChannelRow, GuildRow, OverrideRow, grouped

# ---- rooms and overrides -----------------------------------------------------------------------


async def select_channels(conn: AsyncConnection, guild_id: int) -> list[ChannelRow]:
    stmt = select(channels).where(channels.c.guild_id == guild_id).order_by(channels.c.position, channels.c.id)
    return cast("list[ChannelRow]", list((await conn.execute(stmt)).mappings()))


async def select_channel(conn: AsyncConnection, channel_id: int) -> ChannelRow | None:
    stmt = select(channels).where(channels.c.id == channel_id)
    return cast("ChannelRow | None", (await conn.execute(stmt)).mappings().first())


_CHANNEL_WITH_GUILD = (
    select(channels, *[c.label(f"g__{c.name}") for c in guilds.c])
    .join(guilds, guilds.c.id == channels.c.guild_id)
    .where(channels.c.id == bindparam("channel_id"))
)
# The same with the caller's own account row: a send shows its author, and this spares it a statement.
_CHANNEL_WITH_GUILD_AND_USER = (
    select(channels, *[c.label(f"g__{c.name}") for c in guilds.c], *[c.label(f"u__{c.name}") for c in users.c])
    .join(guilds, guilds.c.id == channels.c.guild_id)
    .outerjoin(users, users.c.id == bindparam("user_id"))
    .where(channels.c.id == bindparam("channel_id"))
)
# Where each table's columns sit in a row of the two statements above (in this order: room, guild, user).
_CHANNEL_NAMES = tuple(c.name for c in channels.c)
_GUILD_NAMES = tuple(c.name for c in guilds.c)
_USER_NAMES = tuple(c.name for c in users.c)
_GUILD_END = len(_CHANNEL_NAMES) + len(_GUILD_NAMES)
_USER_ID_AT = _GUILD_END + _USER_NAMES.index("id")


async def select_channel_with_guild(conn: AsyncConnection, channel_id: int, *, user_id: int | None = None
                                 ) -> tuple[ChannelRow, GuildRow, UserRow | None] | None:
    """A guild room, its guild and (when `user_id` is given) that user's row, in one prebuilt query (every
    room request starts here); None for unknown ids and conversations."""
    if user_id is None:
        row = (await conn.execute(_CHANNEL_WITH_GUILD, {"channel_id": channel_id})).first()
    else:
        row = (await conn.execute(_CHANNEL_WITH_GUILD_AND_USER,
                                  {"channel_id": channel_id, "user_id": user_id})).first()
    if row is None:
        return None
    # Real dicts keyed by each table's columns, so the casts state exactly what they hold; cut from the row's
    # values by position (about 60 lookups by label through the row's mapping cost more than the statement's
    # own result processing).
    values = tuple(row)
    start = len(_CHANNEL_NAMES)
    channel = dict(zip(_CHANNEL_NAMES, values[:start], strict=True))
    guild = dict(zip(_GUILD_NAMES, values[start:_GUILD_END], strict=True))
    user = None if user_id is None or values[_USER_ID_AT] is None else \
        cast(UserRow, dict(zip(_USER_NAMES, values[_GUILD_END:], strict=True)))
    return cast(ChannelRow, channel), cast(GuildRow, guild), user


async def select_guild_channel(conn: AsyncConnection, guild_id: int, channel_id: int) -> ChannelRow | None:
    stmt = select(channels).where(channels.c.guild_id == guild_id, channels.c.id == channel_id)
    return cast("ChannelRow | None", (await conn.execute(stmt)).mappings().first())


async def insert_channel(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(channels).values(values))


async def update_channel_row(conn: AsyncConnection, channel_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(channels).where(channels.c.id == channel_id).values(values))


async def delete_channel_row(conn: AsyncConnection, channel_id: int) -> None:
    await conn.execute(delete(channels).where(channels.c.id == channel_id))


async def count_channels(conn: AsyncConnection, guild_id: int) -> int:
    stmt = select(func.count()).select_from(channels).where(channels.c.guild_id == guild_id)
    return int((await conn.execute(stmt)).scalar_one())


async def select_guild_overrides(conn: AsyncConnection, guild_id: int) -> dict[int, list[OverrideRow]]:
    """channel id -> its overrides, for every room of the guild in one query."""
    return await select_overrides_of_guilds(conn, [guild_id])


async def select_overrides_of_guilds(conn: AsyncConnection, guild_ids: list[int]) -> dict[int, list[OverrideRow]]:
    """channel id -> its overrides, for every room of several guilds in one query (READY)."""
    result: dict[int, list[OverrideRow]] = defaultdict(list)
    if not guild_ids:
        return result
    stmt = (
        select(permission_overrides)
        .join(channels, channels.c.id == permission_overrides.c.channel_id)
        .where(channels.c.guild_id.in_(guild_ids))
        .order_by(permission_overrides.c.channel_id, permission_overrides.c.target_id)
    )
    for row in (await conn.execute(stmt)).mappings():
        result[row["channel_id"]].append(cast(OverrideRow, row))
    return result


# READY's statements, built once: building them per call with the list of 100 guild ids to expand and bind
# cost more than running them.
_CHANNELS_OF_USER_GUILDS = (select(channels).where(channels.c.guild_id.in_(USER_GUILD_IDS))
                            .order_by(channels.c.guild_id, channels.c.position, channels.c.id))
_OVERRIDES_OF_USER_GUILDS = (select(permission_overrides)
                             .join(channels, channels.c.id == permission_overrides.c.channel_id)
                             .where(channels.c.guild_id.in_(USER_GUILD_IDS))
                             .order_by(permission_overrides.c.channel_id, permission_overrides.c.target_id))


async def select_channels_of_user_guilds(conn: AsyncConnection, user_id: int) -> dict[int, list[ChannelRow]]:
    """guild id -> its rooms in display order, for every guild the user is a member of (READY); a guild
    without rooms is absent."""
    return grouped((await conn.execute(_CHANNELS_OF_USER_GUILDS, {"user_id": user_id})).mappings(), "guild_id")


async def select_overrides_of_user_guilds(conn: AsyncConnection, user_id: int) -> dict[int, list[OverrideRow]]:
    """channel id -> its overrides, for every room of every guild the user is a member of (READY)."""
    return grouped((await conn.execute(_OVERRIDES_OF_USER_GUILDS, {"user_id": user_id})).mappings(), "channel_id")


async def select_overrides(conn: AsyncConnection, channel_id: int) -> list[OverrideRow]:
    stmt = (
        select(permission_overrides)
        .where(permission_overrides.c.channel_id == channel_id)
        .order_by(permission_overrides.c.target_id)
    )
    return cast("list[OverrideRow]", list((await conn.execute(stmt)).mappings()))


async def upsert_override(conn: AsyncConnection, channel_id: int, target_id: int, kind: str, allow: int,
                       deny: int) -> None:
    await conn.execute(
        delete(permission_overrides).where(
            permission_overrides.c.channel_id == channel_id, permission_overrides.c.target_id == target_id
        )
    )
    await conn.execute(
        insert(permission_overrides).values(channel_id=channel_id, target_id=target_id, kind=kind, allow=allow,
                                            deny=deny)
    )


async def insert_overrides(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    if rows:
        await conn.execute(insert(permission_overrides), rows)


async def delete_override_row(conn: AsyncConnection, channel_id: int, target_id: int) -> bool:
    result = await conn.execute(
        delete(permission_overrides).where(
            and_(permission_overrides.c.channel_id == channel_id, permission_overrides.c.target_id == target_id)
        )
    )
    return result.rowcount == 1


async def delete_overrides_for_target(conn: AsyncConnection, guild_id: int, target_id: int) -> list[int]:
    """Remove a role's (or member's) overrides in every room of the guild; returns the room ids."""
    room_ids = select(channels.c.id).where(channels.c.guild_id == guild_id)
    stmt = select(permission_overrides.c.channel_id).where(
        permission_overrides.c.target_id == target_id, permission_overrides.c.channel_id.in_(room_ids)
    )
    ids = list((await conn.execute(stmt)).scalars())
    if ids:
        await conn.execute(
            delete(permission_overrides).where(
                permission_overrides.c.target_id == target_id, permission_overrides.c.channel_id.in_(ids)
            )
        )
    return ids
