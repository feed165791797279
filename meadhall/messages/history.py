"""Message history by cursor and single messages (OpenAPI: listMessages, getMessage)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core import jsonbytes
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.messages import page_cache, queries
from meadhall.messages.hydrate import author_summaries, complete, hydrate_one, page_reactions
from meadhall.messages.rooms import access_message_room
from meadhall.messages.rows import MessageRow
from meadhall.messages.views import MessageView
from meadhall.runtime import Runtime


@dataclass(frozen=True)
class Cursor:
    """Where a page starts: older than `before`, newer than `after` (at most one), `limit` messages."""

    before: int | None
    after: int | None
    limit: int


async def access_history(rt: Runtime, principal: Principal, raw_channel_id: str, cursor: Cursor) -> bytes:
    """The page as the encoded answer of listMessages, `{"messages": [...newest first], "has_more": ...}`:
    encoded here because a kept page's answer is often the bytes it gave the previous reader."""
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        entry = await page_cache.history_page(uow.conn, room.channel, principal.user_id, cursor)
        parts = entry.parts
        summaries = await author_summaries(uow.conn, parts, uow.now)
        reactions = await page_reactions(uow.conn, parts, principal.user_id)
    # Without reactions (whose `me` is the reader's) a page shows every reader of the entry the same thing
    # but its authors: replied messages a reader may not see exist only in rooms that held a private message,
    # whose entries are per reader (page_cache.py). So the last answer serves while its authors look the same.
    shown = entry.shown
    if not reactions and shown is not None and shown[0] == summaries:
        return shown[1]
    views = complete(parts, summaries, reactions, principal.user_id)
    body = jsonbytes.dumps({"messages": views, "has_more": entry.has_more})
    if not reactions:
        entry.shown = (summaries, body)
    return body


async def access_message(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str
                         ) -> MessageView:
    """The Message view of one message the caller may read."""
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        row = await access_visible_message(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        return await hydrate_one(uow.conn, row, principal.user_id, uow.now)


async def access_visible_message(conn: AsyncConnection, channel_id: int, viewer_id: int, raw_message_id: str
                                 ) -> MessageRow:
    """A message of this room the viewer may see; else 404 `message.not_found`."""
    message_id = parse_id(raw_message_id)
    row = None if message_id is None else await queries.select_message(conn, channel_id, message_id)
    if row is None or (row["kind"] == "private" and viewer_id not in (row["author_id"], row["recipient_id"])):
        raise AppError("message.not_found")
    return row
