"""SQL of notification settings (docs/push.md, "Notification levels"): a user's own rows, always scoped by the
user, and the rows one message's Web Push needs, read in one statement."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy import (
    BigInteger,
    Boolean,
    Executable,
    bindparam,
    delete,
    false,
    literal,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from meadhall.core.clock import as_utc
from meadhall.db import dialect
from meadhall.db.schema import guild_notification_settings as g
from meadhall.db.schema import room_notification_settings as r
from meadhall.push.settings.levels import ALL


class GuildSettingRow(TypedDict):
    user_id: int
    guild_id: int
    level: str
    muted_until: datetime | None
    suppress_everyone: bool


class RoomSettingRow(TypedDict):
    user_id: int
    channel_id: int
    guild_id: int | None  # the room's server; None for a conversation
    conversation_id: int | None  # the conversation (= channel_id); None for a room of a server
    level: str
    muted_until: datetime | None


_OF_USER = union_all(
    select(literal("guild").label("kind"), g.c.guild_id.label("target_id"), null().cast(BigInteger).label("conversation_id"),
           g.c.level, g.c.muted_until, g.c.suppress_everyone)
    .where(g.c.user_id == bindparam("user_id")),
    select(literal("room").label("kind"), r.c.channel_id.label("target_id"), r.c.conversation_id, r.c.level,
           r.c.muted_until, false().cast(Boolean).label("suppress_everyone"))
    .where(r.c.user_id == bindparam("user_id")),
)


async def select_settings_of_user(conn: AsyncConnection, user_id: int
                                  ) -> tuple[list[GuildSettingRow], list[RoomSettingRow]]:
    """Every row of the user, servers' and rooms', in one statement (READY reads it too), in id order."""
    guilds: list[GuildSettingRow] = []
    rooms: list[RoomSettingRow] = []
    for row in await conn.execute(_OF_USER, {"user_id": user_id}):
        if row.kind == "guild":
            guilds.append(GuildSettingRow(user_id=user_id, guild_id=int(row.target_id), level=row.level,
                                          muted_until=as_utc(row.muted_until),
                                          suppress_everyone=bool(row.suppress_everyone)))
        else:
            conversation = row.conversation_id
            rooms.append(RoomSettingRow(user_id=user_id, channel_id=int(row.target_id), guild_id=None,
                                        conversation_id=None if conversation is None else int(conversation),
                                        level=row.level, muted_until=as_utc(row.muted_until)))
    guilds.sort(key=lambda s: s["guild_id"])
    rooms.sort(key=lambda s: s["channel_id"])
    return guilds, rooms


async def upsert_guild_setting(conn: AsyncConnection, row: GuildSettingRow) -> None:
    await conn.execute(dialect.upsert(conn, g, dict(row), ["user_id", "guild_id"],
                                      ["level", "muted_until", "suppress_everyone"]))


async def delete_guild_setting(conn: AsyncConnection, user_id: int, guild_id: int) -> None:
    await conn.execute(delete(g).where(g.c.user_id == user_id, g.c.guild_id == guild_id))


async def upsert_room_setting(conn: AsyncConnection, row: RoomSettingRow) -> None:
    await conn.execute(dialect.upsert(conn, r, dict(row), ["user_id", "channel_id"], ["level", "muted_until"]))


async def delete_room_setting(conn: AsyncConnection, user_id: int, channel_id: int) -> None:
    await conn.execute(delete(r).where(r.c.user_id == user_id, r.c.channel_id == channel_id))


# ---- what one message's Web Push needs ------------------------------------------------------------------


def _message_settings(named: Callable[[ColumnElement[int]], ColumnElement[bool]]) -> Executable:
    """The server rows and the room rows of the users a message names (`:ids`) and of everyone who chose `all`
    for the room or its server, each with the other half of their setting (a server's mute silences a room set
    to `all`; a room's `default` takes the server's `all`). Both halves are indexed by (place, level)."""
    guild_id, channel_id = bindparam("guild_id", type_=BigInteger), bindparam("channel_id", type_=BigInteger)
    guild_all = select(g.c.user_id).where(g.c.guild_id == guild_id, g.c.level == ALL)
    room_all = select(r.c.user_id).where(r.c.channel_id == channel_id, r.c.level == ALL)
    return union_all(
        select(literal("guild").label("kind"), g.c.user_id, g.c.level, g.c.muted_until, g.c.suppress_everyone)
        .where(g.c.guild_id == guild_id, or_(g.c.level == ALL, named(g.c.user_id), g.c.user_id.in_(room_all))),
        select(literal("room").label("kind"), r.c.user_id, r.c.level, r.c.muted_until,
               false().cast(Boolean).label("suppress_everyone"))
        .where(r.c.channel_id == channel_id, or_(r.c.level == ALL, named(r.c.user_id), r.c.user_id.in_(guild_all))),
    )


_MESSAGE_SETTINGS = dialect.IdsBound(_message_settings)


class MessageSettings(TypedDict):
    guilds: dict[int, tuple[str, datetime | None, bool]]  # user -> (level, muted_until, suppress_everyone)
    rooms: dict[int, tuple[str, datetime | None]]  # user -> (level, muted_until)


async def select_message_settings(conn: AsyncConnection, guild_id: int | None, channel_id: int,
                                  named: Sequence[int]) -> MessageSettings:
    """One statement: the settings deciding who of `named` a message of the room notifies, and who else chose
    `all` there (a conversation has no server half)."""
    found = MessageSettings(guilds={}, rooms={})
    result: Any = await _MESSAGE_SETTINGS.execute(conn, named, {"guild_id": guild_id, "channel_id": channel_id})
    for row in result:
        if row.kind == "guild":
            found["guilds"][int(row.user_id)] = (row.level, as_utc(row.muted_until), bool(row.suppress_everyone))
        else:
            found["rooms"][int(row.user_id)] = (row.level, as_utc(row.muted_until))
    return found
