"""Edit and delete messages (OpenAPI: editMessage, deleteMessage): 24-hour edit window, MANAGE_MESSAGES for others' messages."""

from __future__ import annotations

from datetime import timedelta

from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.clock import as_utc
from meadhall.core.errors import AppError, permission_denied, validation_error
from meadhall.core.limits import EDIT_WINDOW_SECONDS
from meadhall.core.text import norm
from meadhall.files.cleanup import drop_message_files
from meadhall.messages import queries
from meadhall.messages.events import notify_message_delete, notify_message_update
from meadhall.messages.history import access_visible_message
from meadhall.messages.hydrate import audience_views, hydrate_one
from meadhall.messages.read_states import drop_mentions
from meadhall.messages.rooms import access_message_room
from meadhall.messages.views import MessageView
from meadhall.runtime import Runtime

P = perms.P


async def do_edit_message(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str, content: str
                       ) -> MessageView:
    async with rt.uow() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        row = await access_visible_message(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        if row["kind"] == "system" or row["webhook_id"] is not None and row["author_id"] is None:
            raise permission_denied(None, "System and webhook messages cannot be edited")
        if row["author_id"] != principal.user_id:
            room.require(P.MANAGE_MESSAGES)
        await room.check_send(uow.conn)  # edits are refused where sends are (docs/social.md, blocks)
        created = as_utc(row["created_at"])
        assert created is not None
        if uow.now - created > timedelta(seconds=EDIT_WINDOW_SECONDS):
            raise AppError("message.edit_window_expired")
        if not content.strip() and not row["has_attachments"]:
            raise validation_error("content", "must not be empty")
        await queries.lock_channel(uow.conn, room.channel_id)  # room before message (migration 0010)
        await queries.update_message(uow.conn, room.channel_id, row["id"],
                                     {"content": content, "content_norm": norm(content), "edited_at": uow.now})
        fresh = await queries.select_message(uow.conn, room.channel_id, row["id"])
        assert fresh is not None
        view = await hydrate_one(uow.conn, fresh, principal.user_id, uow.now)
        audience = await room.audience(uow.conn, uow.now, fresh)
        for shown, receivers in await audience_views(uow.conn, fresh, view, audience, uow.now):
            uow.emit(notify_message_update(shown, receivers))
    return view


async def do_delete_message(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str) -> None:
    async with rt.uow() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        row = await access_visible_message(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        by_author = row["author_id"] == principal.user_id
        if not by_author:
            room.require(P.MANAGE_MESSAGES)
        audience = await room.audience(uow.conn, uow.now, row)
        await queries.lock_channel(uow.conn, room.channel_id)  # room before message (migration 0010)
        await queries.delete_message(uow.conn, room.channel_id, row["id"])
        await drop_message_files(uow, rt.files, row["id"])
        await drop_mentions(uow, row)
        if room.channel["last_message_id"] == row["id"]:
            await queries.update_last_message_id(uow.conn, room.channel_id,
                                           await queries.select_newest_public_id(uow.conn, room.channel_id))
        if not by_author:
            await record(uow, "message.delete", actor_id=principal.user_id, target_type="message",
                         target_id=row["id"], guild_id=room.guild_id,
                         data={"channel_id": str(room.channel_id),
                               "author_id": None if row["author_id"] is None else str(row["author_id"])})
        uow.emit(notify_message_delete(row["id"], room.channel_id, room.guild_id, audience))
