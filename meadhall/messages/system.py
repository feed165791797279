"""System messages (OpenAPI: listMessages; docs/reference/events.md): written by the server with `kind: "system"`,
`author: null` and a `system_event`, in the same transaction as the change they report."""

from __future__ import annotations

from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.messages import queries
from meadhall.messages.events import notify_message_create
from meadhall.messages.rows import MessageRow
from meadhall.messages.views import MessageView, message_view
from meadhall.realtime.audience import channel_viewers

CONTENT = {
    "channel_create": "{name} created this room.",
    "member_join": "{name} joined the server.",
    "member_join_public": "{name} joined the public server.",
    "member_leave": "{name} left the server.",
    "member_kick": "{name} was removed from the server.",
    "member_ban": "{name} was banned from the server.",
    "voice_join": "{name} joined the voice room.",
}


async def post_system_message(
    uow: UnitOfWork,
    *,
    guild_id: int,
    channel_id: int | None,
    type_: str,
    user_id: int,
    display_name: str,
    actor_id: int | None = None,
    via: str | None = None,
    viewers: list[int] | None = None,
) -> MessageView | None:
    """Write the message and queue MESSAGE_CREATE to the room's viewers; None when there is no room
    (a guild without a system channel)."""
    if channel_id is None:
        return None
    key = "member_join_public" if type_ == "member_join" and via == "public" else type_
    content = CONTENT[key].format(name=display_name)
    row: MessageRow = {
        "id": uow.next_id(),
        "channel_id": channel_id,
        "guild_id": guild_id,
        "author_id": None,
        "webhook_id": None,
        "webhook_name": None,
        "webhook_avatar": None,
        "content": content,
        "content_norm": norm(content),
        "kind": "system",
        "recipient_id": None,
        "system_event": {
            "type": type_,
            "user_id": str(user_id),
            "actor_id": None if actor_id is None else str(actor_id),
            "via": via if type_ == "member_join" else None,
        },
        "nonce": None,
        "reply_to_id": None,
        "mentions": [],
        "mention_channels": [],
        "mention_everyone": False,
        "suppress_embeds": False,
        "pinned": False,
        "pinned_at": None,
        "created_at": uow.now,
        "edited_at": None,
        "reacted": False,
        "has_attachments": False,
    }
    await queries.insert_message(uow.conn, row)  # its trigger moves the room's last_message_id
    view = message_view(row)
    audience = viewers if viewers is not None else await channel_viewers(uow.conn, guild_id, channel_id, uow.now)
    uow.emit(notify_message_create(view, audience))
    return view
