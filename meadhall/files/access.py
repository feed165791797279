"""Who may fetch a file (API.md 2.17): one rule per purpose. A file the caller may not fetch answers
exactly like a missing one, 404 `file.not_found` (0.13).

| purpose      | who                                                                                 |
|--------------|-------------------------------------------------------------------------------------|
| `attachment` | unbound: its uploader; bound: whoever can view the message (VIEW_CHANNEL and        |
|              | READ_MESSAGE_HISTORY in its room; a `private` message: its two parties)             |
| `avatar`     | any signed-in user                                                                  |
| `banner`     | any signed-in user                                                                  |
| `dm_icon`    | participants of the conversation                                                    |
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.files import queries
from meadhall.messages import queries as message_queries
from meadhall.messages.rooms import access_message_room

PUBLIC_PURPOSES = ("avatar", "banner")


async def access_file(conn: AsyncConnection, principal: Principal, raw_id: str, now: datetime) -> RowMapping:
    """The file if the caller may fetch it; else 404 `file.not_found`."""
    file_id = parse_id(raw_id)
    row = None if file_id is None else await queries.get_file(conn, file_id)
    if row is None or not await may_fetch(conn, principal, row, now):
        raise AppError("file.not_found")
    return row


async def may_fetch(conn: AsyncConnection, principal: Principal, row: RowMapping, now: datetime) -> bool:
    purpose = row["purpose"]
    if purpose in PUBLIC_PURPOSES:
        return True
    if purpose == "attachment":
        if row["owner"] is None:
            return row["uploader_id"] == principal.user_id
        return await _may_view_message(conn, principal, row, now)
    if purpose == "dm_icon":
        return await _participant(conn, principal, row)
    return False


async def _may_view_message(conn: AsyncConnection, principal: Principal, row: RowMapping, now: datetime) -> bool:
    if row["message_id"] is None or row["channel_id"] is None:
        return False
    message = await message_queries.get_message(conn, row["channel_id"], row["message_id"])
    if message is None:
        return False
    if message["kind"] == "private" and principal.user_id not in (message["author_id"], message["recipient_id"]):
        return False  # also for instance administrators (API.md 0.14)
    try:
        await access_message_room(conn, principal, str(row["channel_id"]), now, read_history=True)
    except AppError:
        return False
    return True


async def _participant(conn: AsyncConnection, principal: Principal, row: RowMapping) -> bool:
    """Conversations arrive with the social issue; until then no conversation (and so no participant)
    exists, and a conversation icon is served to nobody."""
    return False
