"""GET, PATCH and DELETE /channels/{id} for both kinds of channel (OpenAPI: getChannel, updateChannel,
deleteChannel): a guild room answers as before (meadhall.guilds.rooms.service); a conversation answers for
its participants: its view, the renaming of a group, and leaving it. The conversation is looked up only
when no guild room answers, so rooms cost nothing more."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.guilds.rooms import service as room_service
from meadhall.runtime import Runtime
from meadhall.social.conversations.access import access_conversation
from meadhall.social.conversations.group import do_rename_group
from meadhall.social.conversations.members import do_drop_participant
from meadhall.social.conversations.service import locked, own_view

T = TypeVar("T")


async def _guild_room(call: Awaitable[T]) -> tuple[bool, T | None]:
    """(answered, result): False when no guild room the caller can view has this id."""
    try:
        return True, await call
    except AppError as exc:
        if exc.code != "channel.not_found":
            raise
        return False, None


async def access_any_channel(rt: Runtime, principal: Principal, raw_id: str) -> dict[str, Any]:
    answered, body = await _guild_room(room_service.access_channel_view(rt, principal, raw_id))
    if answered:
        assert body is not None
        return body
    async with rt.read() as uow:
        conv = await access_conversation(uow.conn, principal, raw_id)
        return {"channel": await own_view(uow, conv, principal.user_id)}


async def do_update_any_channel(rt: Runtime, principal: Principal, raw_id: str, fields: dict[str, Any]
                                ) -> dict[str, Any]:
    answered, body = await _guild_room(room_service.do_update_channel(rt, principal, raw_id, fields))
    if answered:
        assert body is not None
        return body
    async with rt.uow() as uow:
        conv = await locked(uow, await access_conversation(uow.conn, principal, raw_id), principal.user_id)
        return await do_rename_group(uow, principal, conv, fields)


async def do_delete_any_channel(rt: Runtime, principal: Principal, raw_id: str) -> None:
    answered, _ = await _guild_room(room_service.do_delete_channel(rt, principal, raw_id))
    if answered:
        return
    async with rt.uow() as uow:
        conv = await locked(uow, await access_conversation(uow.conn, principal, raw_id), principal.user_id)
        await do_drop_participant(rt, uow, conv, principal.user_id)
