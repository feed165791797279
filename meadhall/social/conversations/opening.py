"""Opening a one-to-one conversation and creating a group (OpenAPI: openConversation, createGroupConversation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from meadhall.accounts.imported import refuse_imported
from meadhall.auth.sessions import Principal
from meadhall.core.errors import validation_error
from meadhall.db.uow import UnitOfWork
from meadhall.realtime.events import EventType
from meadhall.runtime import Runtime
from meadhall.social.blocks import check_not_blocked
from meadhall.social.conversations import queries
from meadhall.social.conversations.service import announce, built_name, own_view, reload, select_live_users
from meadhall.social.conversations.views import ConversationView


@dataclass(frozen=True)
class Opened:
    channel: ConversationView  # the caller's view
    created: bool  # False: the pair's oldest one-to-one conversation already existed


def _conversation_row(uow: UnitOfWork, *, is_group: bool, name: str | None, owner_id: int | None,
                      pair: str | None) -> dict[str, Any]:
    return {
        "id": uow.next_id(), "guild_id": None, "type": "dm", "name": name, "topic": None, "position": 0,
        "parent_id": None, "slowmode_seconds": 0, "user_limit": None, "background_file_id": None,
        "icon_file_id": None, "dm_owner_id": owner_id, "is_group": is_group, "dm_pair": pair,
        "last_message_id": None, "created_at": uow.now,
    }


async def do_open_conversation(rt: Runtime, principal: Principal, recipient_id: int) -> Opened:
    """The pair's oldest one-to-one conversation, or a new one (DM_CHANNEL_CREATE to both)."""
    me = principal.user_id
    if recipient_id == me:
        raise validation_error("recipient_id", "must be another user")
    async with rt.uow() as uow:
        refuse_imported((await select_live_users(uow.conn, [recipient_id]))[recipient_id])
        await check_not_blocked(uow.conn, me, recipient_id)
        existing = await queries.select_oldest_pair_channel(uow.conn, me, recipient_id)
        if existing is not None:
            return Opened(await own_view(uow, await reload(uow, existing), me), created=False)
        row = _conversation_row(uow, is_group=False, name=None, owner_id=None,
                                pair=queries.pair_key(me, recipient_id))
        await queries.insert_conversation(uow.conn, row, [me, recipient_id], uow.now)
        conv = await reload(uow, row["id"])
        await announce(uow, EventType.DM_CHANNEL_CREATE, conv, conv.participant_ids)
        return Opened(await own_view(uow, conv, me), created=True)


async def do_create_group(rt: Runtime, principal: Principal, recipient_ids: list[int], name: str | None
                          ) -> ConversationView:
    """A group of the caller (its owner) and 2 to 9 invited users; DM_CHANNEL_CREATE to all."""
    me = principal.user_id
    if me in recipient_ids:
        raise validation_error("recipient_ids", "must not contain yourself")
    async with rt.uow() as uow:
        ordered = [me, *recipient_ids]
        users = await select_live_users(uow.conn, ordered)
        for other in recipient_ids:
            refuse_imported(users[other])
            await check_not_blocked(uow.conn, me, other)
        row = _conversation_row(uow, is_group=True, name=name or built_name(ordered, users, uow), owner_id=me,
                                pair=None)
        await queries.insert_conversation(uow.conn, row, ordered, uow.now)
        conv = await reload(uow, row["id"])
        await announce(uow, EventType.DM_CHANNEL_CREATE, conv, conv.participant_ids)
        return await own_view(uow, conv, me)
