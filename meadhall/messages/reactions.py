"""Reactions (OpenAPI: addReaction, listReactors): add and remove one's own, list who reacted, moderator removal.
Events go to the message's audience: the two parties of a `private` message, else the room's viewers."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.views import user_summary
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.db.uow import UnitOfWork
from meadhall.messages import emoji as emojis
from meadhall.messages import queries
from meadhall.messages.events import notify_reaction
from meadhall.messages.history import access_visible_message
from meadhall.messages.rooms import MessageRoom, access_message_room
from meadhall.messages.rows import MessageRow
from meadhall.runtime import Runtime

P = perms.P
REACTIONS_PER_MESSAGE = 20  # distinct emojis (docs/reference/limits.md)


async def _stored_key(conn: AsyncConnection, message_id: int, parsed: emojis.ParsedEmoji) -> str:
    """The key under which this emoji is (or would be) stored on the message. A custom emoji is matched
    by id: an existing reaction keeps its key even if the emoji was renamed or deleted since."""
    if parsed.unicode is not None:
        return parsed.unicode
    assert parsed.custom_id is not None
    existing = await queries.select_custom_reaction_key(conn, message_id, parsed.custom_id)
    if existing is not None:
        return existing
    found = await emojis.find_custom_emoji(conn, parsed.custom_id)
    if found is None:
        raise AppError("reaction.invalid_emoji", "Unknown custom emoji")
    return found.token


async def _key_to_add(conn: AsyncConnection, room: MessageRoom, user_id: int, message_id: int,
                      parsed: emojis.ParsedEmoji) -> str:
    """A new reaction needs a custom emoji that exists now and that the user may use here."""
    if parsed.unicode is not None:
        return parsed.unicode
    assert parsed.custom_id is not None
    found = await emojis.find_custom_emoji(conn, parsed.custom_id)
    if found is None:
        raise AppError("reaction.invalid_emoji", "Unknown custom emoji")
    await emojis.check_custom_emoji_use(conn, room, user_id, found)
    return await queries.select_custom_reaction_key(conn, message_id, parsed.custom_id) or found.token


async def _emit(uow: UnitOfWork, added: bool, room: MessageRoom, message: MessageRow, user_id: int, emoji: str
                ) -> None:
    uow.emit(notify_reaction(added, room.channel_id, room.guild_id, message["id"], user_id, emoji,
                             await room.audience(uow.conn, uow.now, message)))


async def do_add_reaction(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str,
                       raw_emoji: str) -> None:
    parsed = emojis.parse_emoji(raw_emoji)
    async with rt.uow() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        message = await access_visible_message(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        room.require(P.ADD_REACTIONS)
        key = await _key_to_add(uow.conn, room, principal.user_id, message["id"], parsed)
        # Room before message: the first reaction flags the message, whose trigger writes the room row.
        await queries.lock_channel(uow.conn, room.channel_id)
        await queries.lock_message(uow.conn, room.channel_id, message["id"])
        present = await queries.select_message_emojis(uow.conn, message["id"])
        if key not in present and len(present) >= REACTIONS_PER_MESSAGE:
            raise AppError("reaction.limit_reached")
        if await queries.insert_reaction(uow.conn, message["id"], key, principal.user_id, uow.now):
            await _emit(uow, True, room, message, principal.user_id, key)


async def do_remove_own_reaction(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str,
                              raw_emoji: str) -> None:
    parsed = emojis.parse_emoji(raw_emoji)
    async with rt.uow() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        message = await access_visible_message(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        key = await _stored_key(uow.conn, message["id"], parsed)
        if await queries.delete_reaction(uow.conn, message["id"], key, principal.user_id):
            await _emit(uow, False, room, message, principal.user_id, key)


async def do_remove_user_reaction(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str,
                               raw_emoji: str, raw_user_id: str) -> None:
    """A moderator (MANAGE_MESSAGES) removes someone's reaction."""
    parsed = emojis.parse_emoji(raw_emoji)
    async with rt.uow() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now)
        message = await access_visible_message(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        user_id = parse_id(raw_user_id)
        if user_id is None:
            raise AppError("user.not_found")
        room.require(P.MANAGE_MESSAGES)
        key = await _stored_key(uow.conn, message["id"], parsed)
        if await queries.delete_reaction(uow.conn, message["id"], key, user_id):
            await _emit(uow, False, room, message, user_id, key)


async def access_reactors(rt: Runtime, principal: Principal, raw_channel_id: str, raw_message_id: str,
                        raw_emoji: str, *, after: int | None, limit: int) -> dict[str, Any]:
    parsed = emojis.parse_emoji(raw_emoji)
    async with rt.read() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, read_history=True)
        message = await access_visible_message(uow.conn, room.channel_id, principal.user_id, raw_message_id)
        key = await _stored_key(uow.conn, message["id"], parsed)
        rows, more = await queries.select_reactors(uow.conn, message["id"], key, after=after, limit=limit)
        return {"users": [user_summary(row, uow.now) for row in rows], "has_more": more}
