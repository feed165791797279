"""Acknowledging a room and listing one's read states (OpenAPI: ackChannel, listReadStates). The read-state
bookkeeping (mention counts, marks) is in `meadhall.messages.readstates`."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.messages import queries
from meadhall.messages.events import notify_read_state
from meadhall.messages.history import access_visible_message
from meadhall.messages.readstates import list_read_states, mark_read, prepare_mark, read_state_view
from meadhall.messages.rooms import access_message_room
from meadhall.runtime import Runtime


async def do_ack(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str | None
                 ) -> dict[str, Any]:
    """Mark read up to a message (default: the newest the caller can see); READ_STATE_UPDATE to the
    user's other sessions. The mention count is taken in a read transaction first; the write transaction
    re-checks access (the room may have gone meanwhile) and stores the mark."""
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        message_id = await _mark_target(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        pending = await prepare_mark(uow.conn, principal.user_id, room.channel_id, message_id)
    async with rt.uow() as uow:
        await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        state = read_state_view(await mark_read(uow, pending))
        uow.emit(notify_read_state(state, principal.user_id, principal.session_id))
    return state


async def _mark_target(conn: AsyncConnection, channel_id: int, user_id: int, raw_message_id: str | None
                       ) -> int | None:
    if raw_message_id is not None:
        return int((await access_visible_message(conn, channel_id, user_id, raw_message_id))["id"])
    rows, _ = await queries.page(conn, channel_id, user_id, before=None, after=None, limit=1)
    return int(rows[0]["id"]) if rows else None


async def access_read_states(rt: Runtime, principal: Principal) -> list[dict[str, Any]]:
    async with rt.read() as uow:
        return await list_read_states(uow, principal.user_id)
