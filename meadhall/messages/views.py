"""Serialise message rows into the Message object (OpenAPI: getMessage)."""

from __future__ import annotations

from typing import Any, TypedDict

from meadhall.accounts.views import UserSummaryView
from meadhall.core.clock import iso
from meadhall.messages.rows import MessageFields


class WebhookSnapshot(TypedDict):
    """The webhook a message was sent through, as it was named then."""

    id: str
    name: str | None
    avatar: str | None


class ReactionView(TypedDict):
    """One emoji's reactions on a message (messages.schemas.Reaction); `me`: the viewer's own."""

    emoji: str
    count: int
    me: bool


class ReferencedMessageView(TypedDict):
    """The replied message as a reply shows it (messages/hydrate.assemble)."""

    id: str
    author: UserSummaryView | None
    content: str
    kind: str
    webhook: WebhookSnapshot | None


class MessageView(TypedDict):
    """The Message object (messages.schemas.Message), keys in the order the API writes them."""

    id: str
    channel_id: str
    guild_id: str | None
    author: UserSummaryView | None
    webhook: WebhookSnapshot | None
    content: str
    kind: str
    recipient_id: str | None
    system_event: dict[str, Any] | None
    attachment_ids: list[str]
    attachments: list[dict[str, Any]]
    nonce: str | None
    reply_to_id: str | None
    referenced_message: ReferencedMessageView | None
    mentions: list[str]
    mention_channels: list[str]
    mention_everyone: bool
    suppress_embeds: bool
    reactions: list[ReactionView]
    pinned: bool
    created_at: str
    edited_at: str | None


def webhook_snapshot(row: MessageFields) -> WebhookSnapshot | None:
    if row["webhook_id"] is None:
        return None
    return {"id": str(row["webhook_id"]), "name": row["webhook_name"], "avatar": row["webhook_avatar"]}


def message_view(row: MessageFields, *, attachments: list[dict[str, Any]] | None = None) -> MessageView:
    """The Message object without what depends on the reader or changes without the row: `author`,
    `reactions` and `referenced_message` are left empty (messages/hydrate.assemble fills them)."""
    # Hot: 50 times per history page. Each column is read once; absent values skip the helpers.
    guild_id, recipient_id, reply_to_id = row["guild_id"], row["recipient_id"], row["reply_to_id"]
    mentions, mention_channels, edited_at = row["mentions"], row["mention_channels"], row["edited_at"]
    return {
        "id": str(row["id"]),
        "channel_id": str(row["channel_id"]),
        "guild_id": None if guild_id is None else str(guild_id),
        "author": None,
        "webhook": None if row["webhook_id"] is None else webhook_snapshot(row),
        "content": row["content"],
        "kind": row["kind"],
        "recipient_id": None if recipient_id is None else str(recipient_id),
        "system_event": row["system_event"],
        "attachment_ids": [a["id"] for a in attachments] if attachments else [],
        "attachments": attachments or [],
        "nonce": row["nonce"],
        "reply_to_id": None if reply_to_id is None else str(reply_to_id),
        "referenced_message": None,
        "mentions": [str(m) for m in mentions] if mentions else [],
        "mention_channels": [str(m) for m in mention_channels] if mention_channels else [],
        "mention_everyone": bool(row["mention_everyone"]),
        "suppress_embeds": bool(row["suppress_embeds"]),
        "reactions": [],
        "pinned": bool(row["pinned"]),
        "created_at": iso(row["created_at"]),
        "edited_at": None if edited_at is None else iso(edited_at),
    }
