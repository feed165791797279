"""Message history by cursor and single messages (API.md 3.8)."""

from __future__ import annotations

from typing import Any

from meadhall.api.pagination import Page
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.messages import page_cache, queries
from meadhall.messages.hydrate import assemble, hydrate_one
from meadhall.messages.rooms import access_message_room
from meadhall.runtime import Runtime


async def list_messages(rt: Runtime, principal: Principal, raw_channel_id: str, page: Page) -> dict[str, Any]:
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        parts, more = await page_cache.history_page(uow.conn, room.channel, principal.user_id, page)
        return {"messages": await assemble(uow.conn, parts, principal.user_id, uow.now), "has_more": more}


async def get_message(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        row = await load_visible(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        return {"message": await hydrate_one(uow.conn, row, principal.user_id, uow.now)}


async def load_visible(conn: Any, channel_id: int, viewer_id: int, raw_message_id: str) -> Any:
    """A message of this room the viewer may see; else 404 `message.not_found`."""
    message_id = parse_id(raw_message_id)
    row = None if message_id is None else await queries.get_message(conn, channel_id, message_id)
    if row is None or (row["kind"] == "private" and viewer_id not in (row["author_id"], row["recipient_id"])):
        raise AppError("message.not_found")
    return row
