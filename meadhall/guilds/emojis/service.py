"""Custom emojis of a guild: list, upload, rename, delete (OpenAPI: listEmojis, createEmoji, updateEmoji,
deleteEmoji; docs/customisation.md).

An emoji is a PNG, JPEG, WebP or GIF image, checked by decoding it as its declared type (a file whose
content is not what it is declared as answers 415), at most the `emoji_max_bytes` media limit, at most
`EMOJIS_PER_GUILD` per guild. `animated` is true for GIF images, whatever their number of frames.
"""

from __future__ import annotations

import re
from typing import Any

from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.core.limits import EMOJIS_PER_GUILD
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.files import queries as file_queries
from meadhall.files.checks import check_image, image_type_allowed
from meadhall.files.cleanup import drop_files
from meadhall.files.intake import kept_until_commit
from meadhall.files.upload import OpenUpload
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import GuildContext, access_guild, require
from meadhall.guilds.emojis import queries
from meadhall.guilds.emojis.events import notify_emojis_update
from meadhall.guilds.emojis.queries import EmojiRow
from meadhall.guilds.emojis.schemas import EMOJI_NAME_PATTERN
from meadhall.guilds.emojis.views import emoji_view
from meadhall.guilds.uploads import receive_item, text_field
from meadhall.realtime.audience import guild_members
from meadhall.runtime import Runtime

P = perms.P
NAME = re.compile(EMOJI_NAME_PATTERN.strip("^$"))
FILE_OWNER = "emoji"


async def _emoji(uow: UnitOfWork, gc: GuildContext, raw_id: str) -> EmojiRow:
    emoji_id = parse_id(raw_id)
    row = None if emoji_id is None else await queries.select_emoji(uow.conn, gc.guild_id, emoji_id)
    if row is None:
        raise AppError("emoji.not_found")
    return row


async def _check_name_free(uow: UnitOfWork, guild_id: int, name: str, except_id: int | None = None) -> None:
    if await queries.name_taken(uow.conn, guild_id, norm(name), except_id):
        raise AppError("emoji.name_taken")


async def _announce(uow: UnitOfWork, guild_id: int) -> None:
    rows = await queries.select_emojis(uow.conn, guild_id)
    uow.emit(notify_emojis_update(guild_id, rows, await guild_members(uow.conn, guild_id)))


async def access_emojis(rt: Runtime, principal: Principal, raw_guild_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        rows = await queries.select_emojis(uow.conn, gc.guild_id)
    return {"emojis": [emoji_view(r) for r in rows]}


async def do_create_emoji(rt: Runtime, principal: Principal, raw_guild_id: str, upload: OpenUpload
                          ) -> dict[str, Any]:
    """MANAGE_EMOJIS; the image (413 / 415), then `name` (422), the count and the name (409)."""
    incoming = await receive_item(rt, principal, raw_guild_id, P.MANAGE_EMOJIS, upload, limit="emoji_max_bytes",
                                  purpose="avatar", check=check_image, accept=image_type_allowed)
    new = incoming.new
    async with kept_until_commit(rt, new), rt.uow() as uow:
        name = text_field(incoming.fields, "name", min_length=2, max_length=32, pattern=NAME)
        assert name is not None
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_EMOJIS)
        # Concurrent uploads would both pass the count and the name check (PostgreSQL).
        await guild_queries.lock_guild(uow.conn, gc.guild_id)
        if await queries.count_emojis(uow.conn, gc.guild_id) >= EMOJIS_PER_GUILD:
            raise AppError("emoji.limit_reached")
        await _check_name_free(uow, gc.guild_id, name)
        emoji_id = uow.next_id()
        await file_queries.insert_file(uow.conn, new.row(uow.now, owner=FILE_OWNER, owner_id=emoji_id,
                                                         guild_id=gc.guild_id))
        row: EmojiRow = {"id": emoji_id, "guild_id": gc.guild_id, "name": name, "name_norm": norm(name),
                         "file_id": new.id, "animated": new.checked.content_type == "image/gif",
                         "creator_id": principal.user_id, "created_at": uow.now}
        await queries.insert_emoji(uow.conn, row)
        await record(uow, "emoji.create", actor_id=principal.user_id, target_type="emoji", target_id=emoji_id,
                     guild_id=gc.guild_id, data={"name": name, "animated": row["animated"]})
        await _announce(uow, gc.guild_id)
    return {"emoji": emoji_view(row)}


async def do_update_emoji(rt: Runtime, principal: Principal, raw_guild_id: str, raw_emoji_id: str, name: str
                          ) -> dict[str, Any]:
    """Rename (MANAGE_EMOJIS); the same name again changes nothing and announces nothing."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        row = await _emoji(uow, gc, raw_emoji_id)
        require(gc, P.MANAGE_EMOJIS)
        if name != row["name"]:
            await guild_queries.lock_guild(uow.conn, gc.guild_id)
            await _check_name_free(uow, gc.guild_id, name, row["id"])
            await queries.update_emoji_name(uow.conn, gc.guild_id, row["id"], name, norm(name))
            await record(uow, "emoji.update", actor_id=principal.user_id, target_type="emoji", target_id=row["id"],
                         guild_id=gc.guild_id, data={"changes": {"name": [row["name"], name]}})
            row = {**row, "name": name, "name_norm": norm(name)}
            await _announce(uow, gc.guild_id)
    return {"emoji": emoji_view(row)}


async def do_delete_emoji(rt: Runtime, principal: Principal, raw_guild_id: str, raw_emoji_id: str) -> None:
    """MANAGE_EMOJIS; the image file goes once the deletion has committed. Messages keep the token as text."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        row = await _emoji(uow, gc, raw_emoji_id)
        require(gc, P.MANAGE_EMOJIS)
        await queries.delete_emoji_row(uow.conn, gc.guild_id, row["id"])
        await drop_files(uow, rt.files, [row["file_id"]])
        await record(uow, "emoji.delete", actor_id=principal.user_id, target_type="emoji", target_id=row["id"],
                     guild_id=gc.guild_id, data={"name": row["name"]})
        await _announce(uow, gc.guild_id)
