"""Pins (OpenAPI: pinMessage, unpinMessage, listPins): at most 50 per room, MANAGE_MESSAGES in guild rooms, never `private` or `system`
messages; CHANNEL_PINS_UPDATE to the room's viewers and audit `message.pin` / `message.unpin`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, validation_error
from meadhall.db.uow import UnitOfWork
from meadhall.messages import queries
from meadhall.messages.events import notify_pins
from meadhall.messages.history import access_visible_message
from meadhall.messages.hydrate import hydrate
from meadhall.messages.rooms import MessageRoom, access_message_room
from meadhall.messages.rows import MessageRow
from meadhall.runtime import Runtime

P = perms.P
PINS_PER_ROOM = 50  # docs/reference/limits.md
UNPINNABLE_KINDS = ("private", "system")


async def access_pins(rt: Runtime, principal: Principal, raw_channel_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        rows = await queries.select_pinned_messages(uow.conn, room.channel_id, principal.user_id)
        return {"messages": await hydrate(uow.conn, rows, principal.user_id, uow.now)}


async def _access_pin(uow: UnitOfWork, principal: Principal, raw_channel_id: str, raw_message_id: str
                      ) -> tuple[MessageRoom, MessageRow]:
    """The room and the message, read under the room's lock so the count and the flag stay true."""
    room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
    await queries.lock_channel(uow.conn, room.channel_id)
    message = await access_visible_message(uow.conn, room.channel_id, principal.user_id, raw_message_id)
    if room.guild_id is not None:  # any participant may pin in a conversation
        room.require(P.MANAGE_MESSAGES)
    return room, message


async def _audit_and_notify(uow: UnitOfWork, room: MessageRoom, principal: Principal, message: MessageRow,
                            pinned: bool, last_pin: datetime | None) -> None:
    if room.guild_id is not None:
        await record(uow, "message.pin" if pinned else "message.unpin", actor_id=principal.user_id,
                     target_type="message", target_id=message["id"], guild_id=room.guild_id,
                     data={"channel_id": str(room.channel_id)})
    uow.emit(notify_pins(room.channel_id, room.guild_id, message["id"], pinned, last_pin,
                         await room.viewers(uow.conn, uow.now)))


async def do_pin_message(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str) -> None:
    async with rt.uow() as uow:
        room, message = await _access_pin(uow, principal, raw_channel_id, raw_message_id)
        if message["kind"] in UNPINNABLE_KINDS:
            raise validation_error("message_id", f"{message['kind']} messages cannot be pinned")
        if message["pinned"]:
            return
        if await queries.select_pin_count(uow.conn, room.channel_id) >= PINS_PER_ROOM:
            raise AppError("pin.limit_reached")
        await queries.update_message(uow.conn, room.channel_id, message["id"], {"pinned": True, "pinned_at": uow.now})
        await _audit_and_notify(uow, room, principal, message, True, uow.now)


async def do_unpin_message(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str) -> None:
    async with rt.uow() as uow:
        room, message = await _access_pin(uow, principal, raw_channel_id, raw_message_id)
        if not message["pinned"]:
            raise AppError("pin.not_found")
        await queries.update_message(uow.conn, room.channel_id, message["id"], {"pinned": False, "pinned_at": None})
        last_pin = await queries.select_last_pin_at(uow.conn, room.channel_id)
        await _audit_and_notify(uow, room, principal, message, False, last_pin)
