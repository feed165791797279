"""Typing indicators and read marks (API.md 3.8 typing/ack, 3.3 read-states)."""

from __future__ import annotations

from typing import Any

from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.clock import iso
from meadhall.messages import queries
from meadhall.messages.history import load_visible
from meadhall.messages.readstates import list_read_states, mark_read, prepare_mark, read_state_view
from meadhall.messages.rooms import access_message_room
from meadhall.realtime.events import event
from meadhall.runtime import Runtime

P = perms.P


async def typing(rt: Runtime, principal: Principal, raw_channel_id: str) -> None:
    """TYPING_START to every viewer but the author (the 1-per-3-s bucket is applied by the route)."""
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        room.require(P.SEND_MESSAGES)
        viewers = [u for u in await room.viewers(uow.conn, uow.now) if u != principal.user_id]
        payload = {"channel_id": str(room.channel_id),
                   "guild_id": None if room.guild_id is None else str(room.guild_id),
                   "user_id": str(principal.user_id), "timestamp": iso(uow.now)}
        uow.emit(event("TYPING_START", payload, viewers))


async def ack(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str | None
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
        uow.emit(event("READ_STATE_UPDATE", state, [principal.user_id], exclude_sessions=(principal.session_id,)))
    return {"read_state": state}


async def _mark_target(conn: Any, channel_id: int, user_id: int, raw_message_id: str | None) -> int | None:
    if raw_message_id is not None:
        return int((await load_visible(conn, channel_id, user_id, raw_message_id))["id"])
    rows, _ = await queries.page(conn, channel_id, user_id, before=None, after=None, limit=1)
    return rows[0]["id"] if rows else None


async def read_states(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        return {"read_states": await list_read_states(uow, principal.user_id)}
