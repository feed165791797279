"""What only the owner of a group changes: its name (OpenAPI: updateChannel on a conversation) and its icon
(OpenAPI: setConversationIcon, removeConversationIcon; purpose `dm_icon`, fetched by participants only)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError, permission_denied
from meadhall.db.uow import UnitOfWork
from meadhall.files.queries import FileRow
from meadhall.files.slots import Slot
from meadhall.realtime.events import EventType
from meadhall.social.conversations import queries
from meadhall.social.conversations.access import (
    Conversation,
    access_conversation_or_wrong_type,
    load_conversation,
)
from meadhall.social.conversations.service import announce, own_view, reload


def check_group_owner(conv: Conversation, user_id: int, what: str) -> None:
    """422 `dm.not_group` on a one-to-one conversation; 403 `perm.denied` for anyone but the owner."""
    if not conv.is_group:
        raise AppError("dm.not_group")
    if conv.owner_id != user_id:
        raise permission_denied(None, f"Only the owner of the group changes its {what}")


async def do_rename_group(uow: UnitOfWork, principal: Principal, conv: Conversation, fields: dict[str, Any]
                          ) -> dict[str, Any]:
    """Only `name` applies to a conversation; DM_CHANNEL_UPDATE to the participants when it changed."""
    check_group_owner(conv, principal.user_id, "name")
    name = fields.get("name")
    if name is not None and name != conv.channel["name"]:
        await queries.update_conversation_row(uow.conn, conv.channel_id, {"name": name})
        conv = await reload(uow, conv.channel_id)
        await announce(uow, EventType.DM_CHANNEL_UPDATE, conv, conv.participant_ids)
    return {"channel": await own_view(uow, conv, principal.user_id)}


class ConversationIcon:
    """A group's icon: changed by its owner, fetched by its participants only."""

    slot = Slot("channel.icon", "dm_icon", "avatar_max_bytes")

    def __init__(self, principal: Principal, raw_channel_id: str) -> None:
        self.principal, self.raw_channel_id = principal, raw_channel_id

    async def load(self, uow: UnitOfWork) -> Conversation:
        conv = await access_conversation_or_wrong_type(uow.conn, self.principal, self.raw_channel_id, uow.now)
        check_group_owner(conv, self.principal.user_id, "icon")
        return conv

    def current(self, target: Conversation) -> int | None:
        value = target.channel["icon_file_id"]
        return None if value is None else int(value)

    def placement(self, target: Conversation) -> dict[str, Any]:
        return {"channel_id": target.channel_id, "owner_id": target.channel_id}

    async def apply(self, uow: UnitOfWork, target: Conversation, new_id: int | None, old_id: int | None
                    ) -> dict[str, Any]:
        if new_id != old_id:
            await queries.update_conversation_row(uow.conn, target.channel_id, {"icon_file_id": new_id})
            target = await reload(uow, target.channel_id)
            await announce(uow, EventType.DM_CHANNEL_UPDATE, target, target.participant_ids)
        return {"channel": await own_view(uow, target, self.principal.user_id)}


async def check_fetch_icon(conn: AsyncConnection, principal: Principal, row: FileRow, now: datetime) -> bool:
    """The fetch rule of `dm_icon` files: the participants of the conversation (nobody else, instance
    administrators included)."""
    del now
    if row["channel_id"] is None:
        return False
    conv = await load_conversation(conn, row["channel_id"])
    return conv is not None and conv.has(principal.user_id)
