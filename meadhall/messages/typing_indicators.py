"""Typing indicators (OpenAPI: sendTyping)."""

from __future__ import annotations

from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.messages.events import notify_typing
from meadhall.messages.rooms import access_message_room
from meadhall.runtime import Runtime

P = perms.P


async def do_send_typing(rt: Runtime, principal: Principal, raw_channel_id: str) -> None:
    """TYPING_START to every viewer but the author (the 1-per-3-s bucket is applied by the route)."""
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        room.require(P.SEND_MESSAGES)
        await room.check_send(uow.conn)  # typing announces a send: refused where sending is (docs/social.md)
        viewers = [u for u in await room.viewers(uow.conn, uow.now) if u != principal.user_id]
        uow.emit(notify_typing(room.channel_id, room.guild_id, principal.user_id, uow.now, viewers))
