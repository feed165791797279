"""Attachments (OpenAPI: uploadAttachment, sendMessage): uploaded to a room, private to the uploader until
sent, bound to a message by `attachment_ids` on send, deleted with the message. Messages own the binding
and the fetch rule of attachments; the upload, check and storage are the generic flow of `meadhall.files`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, validation_error
from meadhall.core.ids import parse_id
from meadhall.files import queries as file_queries
from meadhall.files.checks import check_attachment
from meadhall.files.intake import kept_until_commit, take_upload
from meadhall.files.queries import FileRow
from meadhall.files.upload import OpenUpload
from meadhall.files.views import file_view
from meadhall.messages import queries
from meadhall.messages.rooms import MessageRoom, access_message_room
from meadhall.runtime import Runtime

P = perms.P
FIELD = "attachment_ids"


async def do_upload_attachment(rt: Runtime, principal: Principal, raw_channel_id: str, upload: OpenUpload
                               ) -> dict[str, Any]:
    """The room and ATTACH_FILES are checked before the upload is opened, and again when the row is
    written (the upload may take a while)."""
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        room.require(P.ATTACH_FILES)
    new = await take_upload(rt, upload, limit=rt.settings.MAX_UPLOAD_SIZE, purpose="attachment",
                            uploader_id=principal.user_id, check=check_attachment)
    async with kept_until_commit(rt, new), rt.uow() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        room.require(P.ATTACH_FILES)
        row = new.row(uow.now, guild_id=room.guild_id, channel_id=room.channel_id)
        await file_queries.insert_file(uow.conn, row)
    return {"file": file_view(row)}


def _ids(raw_ids: list[str]) -> list[int]:
    ids = [parse_id(raw) for raw in raw_ids]
    found = [i for i in ids if i is not None]
    if len(found) != len(ids) or len(set(found)) != len(found):
        raise validation_error(FIELD, "must be distinct file ids")
    return found


def _bindable(row: FileRow | None, room: MessageRoom, user_id: int) -> bool:
    return (row is not None and row["purpose"] == "attachment" and row["owner"] is None
            and row["uploader_id"] == user_id and row["channel_id"] == room.channel_id)


async def check_attachments(conn: AsyncConnection, room: MessageRoom, user_id: int, raw_ids: list[str]) -> None:
    """Each id must name an unbound attachment that this user uploaded to this room; else 422."""
    ids = _ids(raw_ids)
    found = await file_queries.select_files_by_ids(conn, ids)
    if not all(_bindable(found.get(i), room, user_id) for i in ids):
        raise validation_error(FIELD, "each id must be an unsent upload of yours to this room")


async def do_bind_attachments(conn: AsyncConnection, room: MessageRoom, user_id: int, raw_ids: list[str],
                              message_id: int) -> None:
    """Bind in the order given. A file taken meanwhile by another send fails the whole send (422)."""
    for position, file_id in enumerate(_ids(raw_ids)):
        if not await file_queries.update_file_bound_to_message(
                conn, file_id, uploader_id=user_id, channel_id=room.channel_id, message_id=message_id,
                position=position):
            raise validation_error(FIELD, "each id must be an unsent upload of yours to this room")


async def attachment_views(conn: AsyncConnection, message_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The File objects of each message, in one query for a whole page."""
    rows = await file_queries.select_files_of_messages(conn, message_ids)
    return {message_id: [file_view(r) for r in found] for message_id, found in rows.items()}


async def check_fetch_attachment(conn: AsyncConnection, principal: Principal, row: FileRow, now: datetime
                                 ) -> bool:
    """The fetch rule of `attachment` files (registered with meadhall.files.access at start): unbound,
    its uploader; bound, whoever can view the message (VIEW_CHANNEL and READ_MESSAGE_HISTORY in its room;
    a `private` message: its two parties, also for instance administrators)."""
    if row["owner"] is None:
        return row["uploader_id"] == principal.user_id
    if row["message_id"] is None or row["channel_id"] is None:
        return False
    message = await queries.select_message(conn, row["channel_id"], row["message_id"])
    if message is None:
        return False
    if message["kind"] == "private" and principal.user_id not in (message["author_id"], message["recipient_id"]):
        return False
    try:
        await access_message_room(conn, principal, str(row["channel_id"]), now, read_history=True)
    except AppError:
        return False
    return True
