"""What conversations add to the hooks of lower layers when the app is built (`create_app`): the conversation
as a message room, who may fetch a group icon, and whether an id that no guild room answers is a conversation
of the caller (room-only operations then answer 422 `channel.wrong_type`)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.files.access import fetch_rules
from meadhall.guilds.hooks import conversation_check
from meadhall.messages.rooms import conversation_room
from meadhall.social.conversations import rooms
from meadhall.social.conversations.access import load_conversation
from meadhall.social.conversations.group import check_fetch_icon


async def takes_part(conn: AsyncConnection, user_id: int, channel_id: int) -> bool:
    conv = await load_conversation(conn, channel_id)
    return conv is not None and conv.has(user_id)


def setup() -> None:
    conversation_room.add("social.conversations", rooms.conversation_room)
    fetch_rules.add("dm_icon", check_fetch_icon)  # files know no domain: conversations say who sees one
    conversation_check.add("social.conversations", takes_part)
