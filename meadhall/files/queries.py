"""SQL for file rows. Returns typed rows; never commits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import and_, bindparam, delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.dialect import upsert
from meadhall.db.schema import (
    channels,
    cosmetics,
    emojis,
    files,
    guilds,
    instance_settings,
    invites,
    messages,
    sounds,
    users,
    webhooks,
)

MESSAGE = "message"


class FileRow(TypedDict):
    id: int
    purpose: str
    uploader_id: int | None
    original_name: str
    content_type: str
    size: int
    sha256: str
    meta: dict[str, Any]
    guild_id: int | None
    channel_id: int | None
    message_id: int | None
    position: int | None
    owner: str | None
    owner_id: int | None
    owner_key: str | None
    created_at: datetime


class OrphanRow(TypedDict):
    id: int
    size: int
    created_at: datetime


_SELECT_FILE = select(files).where(files.c.id == bindparam("id"))
_SELECT_OF_MESSAGES = (select(files).where(files.c.message_id.in_(bindparam("ids", expanding=True)))
                       .order_by(files.c.message_id, files.c.position))


async def insert_file(conn: AsyncConnection, row: FileRow) -> None:
    await conn.execute(files.insert(), dict(row))


async def select_file(conn: AsyncConnection, file_id: int) -> FileRow | None:
    return cast("FileRow | None", (await conn.execute(_SELECT_FILE, {"id": file_id})).mappings().first())


async def select_files_by_ids(conn: AsyncConnection, ids: Iterable[int]) -> dict[int, FileRow]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = await conn.execute(select(files).where(files.c.id.in_(wanted)))
    return {r["id"]: cast(FileRow, r) for r in rows.mappings()}


async def select_files_of_messages(conn: AsyncConnection, message_ids: list[int]) -> dict[int, list[FileRow]]:
    """The files bound to each message, in the order they were attached."""
    if not message_ids:
        return {}
    out: dict[int, list[FileRow]] = defaultdict(list)
    for row in (await conn.execute(_SELECT_OF_MESSAGES, {"ids": message_ids})).mappings():
        out[row["message_id"]].append(cast(FileRow, row))
    return out


async def update_file_bound_to_message(conn: AsyncConnection, file_id: int, *, uploader_id: int, channel_id: int,
                                       message_id: int, position: int) -> bool:
    """Bind one unbound attachment of this uploader in this room to a message. Conditional, so two sends
    racing for the same upload cannot both bind it."""
    result = await conn.execute(
        update(files)
        .where(files.c.id == file_id, files.c.owner.is_(None), files.c.purpose == "attachment",
               files.c.uploader_id == uploader_id, files.c.channel_id == channel_id)
        .values(owner=MESSAGE, owner_id=message_id, message_id=message_id, position=position)
    )
    return result.rowcount == 1


async def delete_files(conn: AsyncConnection, ids: list[int]) -> None:
    if ids:
        await conn.execute(delete(files).where(files.c.id.in_(ids)))


async def delete_unbound_files(conn: AsyncConnection, ids: list[int]) -> list[int]:
    """Only those still unbound: an upload sent meanwhile is kept. The ids deleted."""
    stmt = delete(files).where(files.c.id.in_(ids), files.c.owner.is_(None)).returning(files.c.id)
    return list((await conn.execute(stmt)).scalars())


async def select_file_ids_of_message(conn: AsyncConnection, message_id: int) -> list[int]:
    return list((await conn.execute(select(files.c.id).where(files.c.message_id == message_id))).scalars())


async def select_file_ids_of_messages(conn: AsyncConnection, message_ids: list[int]) -> list[int]:
    """The files of several messages at once (a ban that deletes a user's recent messages)."""
    if not message_ids:
        return []
    return list((await conn.execute(select(files.c.id).where(files.c.message_id.in_(message_ids)))).scalars())


async def select_file_ids_of_channel(conn: AsyncConnection, channel_id: int) -> list[int]:
    """Everything a room holds: uploads to it (bound or not) and its own images (their `channel_id` is
    the room too)."""
    return list((await conn.execute(select(files.c.id).where(files.c.channel_id == channel_id))).scalars())


async def select_file_ids_of_guild(conn: AsyncConnection, guild_id: int) -> list[int]:
    return list((await conn.execute(select(files.c.id).where(files.c.guild_id == guild_id))).scalars())


_ORPHAN_COLUMNS = (files.c.id, files.c.size, files.c.created_at)


async def select_unbound_before(conn: AsyncConnection, cutoff: datetime) -> list[OrphanRow]:
    stmt = (select(*_ORPHAN_COLUMNS).where(files.c.owner.is_(None), files.c.created_at < cutoff)
            .order_by(files.c.id))
    return [cast(OrphanRow, r) for r in (await conn.execute(stmt)).mappings()]


# The holders of each kind of owner: (table, its key, the column pointing at the file). A file whose
# holder was deleted without it (a cascade, an expired invitation purged) is dangling, and maintenance
# treats it like an unbound upload. Owners of later features add their row as they arrive (tables only:
# no domain code); files of an owner kind not listed are never swept.
HOLDERS: dict[str, tuple[Any, str, Any]] = {
    "user.avatar": (users, "owner_id", users.c.avatar_file_id),
    "guild.icon": (guilds, "owner_id", guilds.c.icon_file_id),
    "guild.banner": (guilds, "owner_id", guilds.c.banner_file_id),
    "guild.splash": (guilds, "owner_id", guilds.c.splash_file_id),
    "channel.background": (channels, "owner_id", channels.c.background_file_id),
    "channel.icon": (channels, "owner_id", channels.c.icon_file_id),
    "invite.background": (invites, "owner_key", invites.c.background_file_id),
    "emoji": (emojis, "owner_id", emojis.c.file_id),
    "sound": (sounds, "owner_id", sounds.c.file_id),
    "cosmetic": (cosmetics, "owner_id", cosmetics.c.file_id),
    "webhook": (webhooks, "owner_id", webhooks.c.avatar_file_id),
}


async def select_dangling_before(conn: AsyncConnection, cutoff: datetime) -> list[OrphanRow]:
    """Bound files whose holder no longer points at them, created before `cutoff`: one anti-join on the
    holder's primary key per kind of owner."""
    out: list[OrphanRow] = []
    gone = (select(*_ORPHAN_COLUMNS).select_from(files.outerjoin(messages, messages.c.id == files.c.message_id))
            .where(files.c.owner == MESSAGE, files.c.created_at < cutoff, messages.c.id.is_(None)))
    out += [cast(OrphanRow, r) for r in (await conn.execute(gone)).mappings()]
    for owner, (table, key, column) in HOLDERS.items():
        pk = table.c.code if key == "owner_key" else table.c.id
        held = and_(pk == files.c[key], column == files.c.id)
        stmt = (select(*_ORPHAN_COLUMNS).select_from(files.outerjoin(table, held))
                .where(files.c.owner == owner, files.c.created_at < cutoff, pk.is_(None)))
        out += [cast(OrphanRow, r) for r in (await conn.execute(stmt)).mappings()]
    return sorted(out, key=lambda r: r["id"])


async def select_existing_ids(conn: AsyncConnection, ids: list[int]) -> set[int]:
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        found |= set((await conn.execute(select(files.c.id).where(files.c.id.in_(batch)))).scalars())
    return found


# The instance settings are one row (docs/reference/limits.md), written by instance administration.
SETTINGS_ROW = 1


async def select_instance_settings_data(conn: AsyncConnection) -> Any:
    """The settings row's `data` (a JSON object), None while it was never written."""
    stmt = select(instance_settings.c.data).where(instance_settings.c.id == SETTINGS_ROW)
    return (await conn.execute(stmt)).scalar()


async def select_instance_settings_updated_at(conn: AsyncConnection) -> datetime | None:
    """When the settings row was last written; None while it was never written."""
    stmt = select(instance_settings.c.updated_at).where(instance_settings.c.id == SETTINGS_ROW)
    value: datetime | None = (await conn.execute(stmt)).scalar()
    return value


async def upsert_instance_settings_data(conn: AsyncConnection, data: dict[str, Any], now: datetime) -> None:
    """Write the settings row's `data`, creating the row on first write."""
    await conn.execute(upsert(conn, instance_settings, {"id": SETTINGS_ROW, "data": data, "updated_at": now},
                              keys=["id"], update=["data", "updated_at"]))
