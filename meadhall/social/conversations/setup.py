"""What conversations plug into lower layers at start (called by `create_app`): the conversation as a
message room, who may fetch a group icon, and whether an id that no guild room answers is a conversation
of the caller (room-only operations then answer 422 `channel.wrong_type`)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.files.access import register_fetch_rule
from meadhall.guilds.hooks import on_conversation_check
from meadhall.social.conversations import rooms
from meadhall.social.conversations.access import load_conversation
from meadhall.social.conversations.group import check_fetch_icon


async def takes_part(conn: AsyncConnection, user_id: int, channel_id: int) -> bool:
    conv = await load_conversation(conn, channel_id)
    return conv is not None and conv.has(user_id)


def register() -> None:
    rooms.register()
    register_fetch_rule("dm_icon", check_fetch_icon)  # files know no domain: conversations say who sees one
    on_conversation_check("social.conversations", takes_part)
