"""Execute a webhook (OpenAPI: executeWebhook; docs/webhooks.md): a message posted without a session,
authorised by the token in the path alone.

The token is compared with the stored digest in constant time, and a wrong token answers exactly like an
unknown webhook (404 `webhook.not_found`). The `webhooks.execute` bucket (per webhook) is taken only once
the token is right, so nobody without it can use up a webhook's allowance; slowmode and `messages.send` do
not apply. The message has no author: the webhook's name and avatar at sending time (or the `username`
and `avatar_url` of the request) are kept on it as its snapshot. Content is never read as a slash
command; mentions of users and rooms count as in any message, `@everyone` does not (a webhook holds no
permission). Attachments are the webhook creator's unsent uploads to the room.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core import permissions as perms
from meadhall.core.crypto import token_digest
from meadhall.core.errors import AppError, permission_denied, rate_limited, validation_error
from meadhall.core.ids import parse_id
from meadhall.core.ratelimit import Decision
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.rooms import queries as room_queries
from meadhall.guilds.rows import ChannelRow
from meadhall.messages import queries as message_queries
from meadhall.messages.attachments import check_attachments, do_bind_attachments
from meadhall.messages.commands import mentioned_channel_ids, mentioned_user_ids
from meadhall.messages.events import notify_message_create
from meadhall.messages.hydrate import hydrate
from meadhall.messages.read_states import bump_mentions
from meadhall.messages.rooms import MessageRoom
from meadhall.messages.rows import MessageRow
from meadhall.messages.sent_hooks import SentMessage, announce_sent, record_sent, wanted
from meadhall.messages.views import MessageView
from meadhall.messages.webhooks import queries
from meadhall.messages.webhooks.queries import WebhookRow
from meadhall.realtime.audience import channel_viewers
from meadhall.runtime import Runtime

BUCKET = "webhooks.execute"
NO_AUTHOR = 0  # no user wrote it: nobody is left out as its author, nobody reads it as the viewer


@dataclass(frozen=True)
class Execution:
    content: str
    username: str | None
    avatar_url: str | None
    attachment_ids: list[str]


@dataclass
class WebhookRoom(MessageRoom):
    """The webhook's room as the message operations see it: no caller, no permission of its own."""

    row: ChannelRow
    _viewers: list[int] | None = None

    @property
    def channel(self) -> ChannelRow:
        return self.row

    @property
    def guild_id(self) -> int | None:
        return int(self.row["guild_id"]) if self.row["guild_id"] is not None else None

    @property
    def permissions(self) -> int:
        return 0

    @property
    def is_instance_admin(self) -> bool:
        return False

    @property
    def caller(self) -> Mapping[str, Any] | None:
        return None

    def require(self, flag: perms.Permission) -> None:
        raise permission_denied(flag.name, f"Missing permission {flag.name} in this room")

    async def viewers(self, conn: AsyncConnection, now: datetime) -> list[int]:
        if self._viewers is None:
            assert self.guild_id is not None
            self._viewers = await channel_viewers(conn, self.guild_id, self.channel_id, now)
        return self._viewers


def token_matches(row: WebhookRow, token: str) -> bool:
    """Constant time: how much of a guess was right must not show in the answer's timing."""
    return hmac.compare_digest(token_digest(token).encode(), row["token_hash"].encode())


async def _webhook(uow: UnitOfWork, raw_id: str, token: str) -> WebhookRow:
    webhook_id = parse_id(raw_id)
    row = None if webhook_id is None else await queries.select_webhook(uow.conn, webhook_id)
    if row is None or not token_matches(row, token):
        raise AppError("webhook.not_found")
    return row


async def check_execute_rate(rt: Runtime, raw_id: str, token: str) -> Decision:
    """The token first (404), then one token of the webhook's `webhooks.execute` bucket (429)."""
    async with rt.read() as uow:
        row = await _webhook(uow, raw_id, token)
    decision = await rt.limiter.hit(BUCKET, f"w{row['id']}", rt.now_ts())
    if not decision.allowed:
        raise rate_limited(BUCKET, decision.retry_after, decision.headers())
    return decision


def _snapshot(row: WebhookRow, request: Execution) -> tuple[str, str | None]:
    name = request.username or row["name"]
    if request.avatar_url is not None:
        return name, request.avatar_url
    return name, None if row["avatar_file_id"] is None else f"/files/{row['avatar_file_id']}"


async def do_execute_webhook(rt: Runtime, raw_id: str, token: str, request: Execution) -> MessageView:
    """Write the message and send MESSAGE_CREATE to the room's viewers (the route took the rate first)."""
    if not request.content.strip() and not request.attachment_ids:
        raise validation_error("content", "must not be empty")
    async with rt.uow() as uow:
        # Again inside the write: a regeneration or deletion may have committed meanwhile.
        hook = await _webhook(uow, raw_id, token)
        channel = await room_queries.select_guild_channel(uow.conn, hook["guild_id"], hook["channel_id"])
        if channel is None:  # the room's deletion removes its webhooks; never seen outside a race
            raise AppError("webhook.not_found")
        room = WebhookRoom(channel)
        if request.attachment_ids:
            await check_attachments(uow.conn, room, hook["creator_id"], request.attachment_ids)
        row = await _build_row(uow, room, hook, request)
        await message_queries.insert_message(uow.conn, row)
        if request.attachment_ids:
            await do_bind_attachments(uow.conn, room, hook["creator_id"], request.attachment_ids, row["id"])
        viewers = await room.viewers(uow.conn, uow.now)
        visible = set(viewers)
        notified = [int(m) for m in row["mentions"] if int(m) in visible]
        await bump_mentions(uow, room.channel_id, notified)
        [view] = await hydrate(uow.conn, [row], NO_AUTHOR, uow.now, with_reactions=False,
                               with_attachments=bool(request.attachment_ids))
        uow.emit(notify_message_create(view, viewers))
        sent = None
        if wanted():  # Web Push for the mentioned: its note is written with the message (docs/push.md)
            sent = SentMessage(view, room.channel_id, hook["guild_id"], channel["name"], NO_AUTHOR, notified, [],
                               recorded=True)
            await record_sent(rt, uow, sent)
    if sent is not None:  # after commit: wakes the delivery, never waits for it
        announce_sent(rt, sent)
    return view


async def _build_row(uow: UnitOfWork, room: WebhookRoom, hook: WebhookRow, request: Execution) -> MessageRow:
    content = request.content
    mentions = await message_queries.select_existing_user_ids(uow.conn, mentioned_user_ids(content))
    channel_mentions = await message_queries.select_guild_channel_ids(
        uow.conn, hook["guild_id"], mentioned_channel_ids(content))
    name, avatar = _snapshot(hook, request)
    return {
        "id": uow.next_id(),
        "channel_id": room.channel_id,
        "guild_id": hook["guild_id"],
        "author_id": None,
        "webhook_id": hook["id"],
        "webhook_name": name,
        "webhook_avatar": avatar,
        "content": content,
        "content_norm": norm(content),
        "kind": "normal",
        "recipient_id": None,
        "system_event": None,
        "nonce": None,
        "reply_to_id": None,
        "mentions": [str(m) for m in mentions],
        "mention_channels": [str(c) for c in channel_mentions],
        "mention_everyone": False,
        "suppress_embeds": False,
        "pinned": False,
        "pinned_at": None,
        "created_at": uow.now,
        "edited_at": None,
        "reacted": False,
        "has_attachments": bool(request.attachment_ids),
    }
