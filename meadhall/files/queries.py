"""SQL for file rows. Returns row mappings; never commits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, and_, bindparam, delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import channels, files, guilds, invites, messages, users

Row = RowMapping

MESSAGE = "message"

_GET = select(files).where(files.c.id == bindparam("id"))
_OF_MESSAGES = (select(files).where(files.c.message_id.in_(bindparam("ids", expanding=True)))
                .order_by(files.c.message_id, files.c.position))


async def insert_file(conn: AsyncConnection, row: dict[str, Any]) -> None:
    await conn.execute(files.insert(), row)


async def get_file(conn: AsyncConnection, file_id: int) -> Row | None:
    return (await conn.execute(_GET, {"id": file_id})).mappings().first()


async def files_by_ids(conn: AsyncConnection, ids: Iterable[int]) -> dict[int, Row]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = await conn.execute(select(files).where(files.c.id.in_(wanted)))
    return {r["id"]: r for r in rows.mappings()}


async def attachments_of(conn: AsyncConnection, message_ids: list[int]) -> dict[int, list[Row]]:
    """The files bound to each message, in the order they were attached."""
    if not message_ids:
        return {}
    out: dict[int, list[Row]] = defaultdict(list)
    for row in (await conn.execute(_OF_MESSAGES, {"ids": message_ids})).mappings():
        out[row["message_id"]].append(row)
    return out


async def bind(conn: AsyncConnection, file_id: int, *, uploader_id: int, channel_id: int, message_id: int,
               position: int) -> bool:
    """Bind one unbound attachment of this uploader in this room to a message. Conditional, so two sends
    racing for the same upload cannot both bind it."""
    result = await conn.execute(
        update(files)
        .where(files.c.id == file_id, files.c.owner.is_(None), files.c.purpose == "attachment",
               files.c.uploader_id == uploader_id, files.c.channel_id == channel_id)
        .values(owner=MESSAGE, owner_id=message_id, message_id=message_id, position=position)
    )
    return result.rowcount == 1


async def set_invite_background(conn: AsyncConnection, code: str, file_id: int | None) -> None:
    await conn.execute(update(invites).where(invites.c.code == code).values(background_file_id=file_id))


async def delete_rows(conn: AsyncConnection, ids: list[int]) -> None:
    if ids:
        await conn.execute(delete(files).where(files.c.id.in_(ids)))


async def ids_of_message(conn: AsyncConnection, message_id: int) -> list[int]:
    return list((await conn.execute(select(files.c.id).where(files.c.message_id == message_id))).scalars())


async def ids_of_channel(conn: AsyncConnection, channel_id: int) -> list[int]:
    """Everything a room holds: uploads to it (bound or not) and its own images (their `channel_id` is
    the room too)."""
    return list((await conn.execute(select(files.c.id).where(files.c.channel_id == channel_id))).scalars())


async def ids_of_guild(conn: AsyncConnection, guild_id: int) -> list[int]:
    return list((await conn.execute(select(files.c.id).where(files.c.guild_id == guild_id))).scalars())


async def unbound_before(conn: AsyncConnection, cutoff: datetime) -> list[Row]:
    stmt = (select(files.c.id, files.c.size, files.c.created_at)
            .where(files.c.owner.is_(None), files.c.created_at < cutoff).order_by(files.c.id))
    return list((await conn.execute(stmt)).mappings())


# The holders of each kind of owner: (table, its key, the column pointing at the file). A file whose
# holder was deleted without it (a cascade, an expired invitation purged) is dangling, and maintenance
# treats it like an unbound upload. Owners of later features register here as they arrive; files of an
# owner kind not listed are never swept.
HOLDERS: dict[str, tuple[Any, Any, Any]] = {
    "user.avatar": (users, "owner_id", users.c.avatar_file_id),
    "guild.icon": (guilds, "owner_id", guilds.c.icon_file_id),
    "guild.banner": (guilds, "owner_id", guilds.c.banner_file_id),
    "guild.splash": (guilds, "owner_id", guilds.c.splash_file_id),
    "channel.background": (channels, "owner_id", channels.c.background_file_id),
    "channel.icon": (channels, "owner_id", channels.c.icon_file_id),
    "invite.background": (invites, "owner_key", invites.c.background_file_id),
}


async def dangling_before(conn: AsyncConnection, cutoff: datetime) -> list[Row]:
    """Bound files whose holder no longer points at them, created before `cutoff`: one anti-join on the
    holder's primary key per kind of owner."""
    out: list[Row] = []
    columns = (files.c.id, files.c.size, files.c.created_at)
    gone = (select(*columns).select_from(files.outerjoin(messages, messages.c.id == files.c.message_id))
            .where(files.c.owner == MESSAGE, files.c.created_at < cutoff, messages.c.id.is_(None)))
    out += list((await conn.execute(gone)).mappings())
    for owner, (table, key, column) in HOLDERS.items():
        pk = table.c.code if key == "owner_key" else table.c.id
        held = and_(pk == files.c[key], column == files.c.id)
        stmt = (select(*columns).select_from(files.outerjoin(table, held))
                .where(files.c.owner == owner, files.c.created_at < cutoff, pk.is_(None)))
        out += list((await conn.execute(stmt)).mappings())
    return sorted(out, key=lambda r: r["id"])


async def existing_ids(conn: AsyncConnection, ids: list[int]) -> set[int]:
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        found |= set((await conn.execute(select(files.c.id).where(files.c.id.in_(batch)))).scalars())
    return found
