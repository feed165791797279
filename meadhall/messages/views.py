"""Serialise message rows into the Message object of API.md 2.15."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from sqlalchemy import RowMapping

from meadhall.core.clock import iso


def webhook_snapshot(row: RowMapping) -> dict[str, Any] | None:
    if row["webhook_id"] is None:
        return None
    return {"id": str(row["webhook_id"]), "name": row["webhook_name"], "avatar": row["webhook_avatar"]}


# Hot: 50 times per history page. One C-level call reads every column the view needs (from a row
# mapping or a dict alike), instead of a subscript each.
_COLUMNS = itemgetter("id", "channel_id", "guild_id", "webhook_id", "content", "kind", "recipient_id",
                      "system_event", "nonce", "reply_to_id", "mentions", "mention_channels", "mention_everyone",
                      "suppress_embeds", "pinned", "created_at", "edited_at")


def message_view(
    row: RowMapping,
    *,
    author: dict[str, Any] | None,
    attachments: list[dict[str, Any]] | None = None,
    reactions: list[dict[str, Any]] | None = None,
    referenced: dict[str, Any] | None = None,
) -> dict[str, Any]:
    (id_, channel_id, guild_id, webhook_id, content, kind, recipient_id, system_event, nonce, reply_to_id,
     mentions, mention_channels, mention_everyone, suppress_embeds, pinned, created_at, edited_at) = _COLUMNS(row)
    return {
        "id": str(id_),
        "channel_id": str(channel_id),
        "guild_id": None if guild_id is None else str(guild_id),
        "author": author,
        "webhook": None if webhook_id is None else webhook_snapshot(row),
        "content": content,
        "kind": kind,
        "recipient_id": None if recipient_id is None else str(recipient_id),
        "system_event": system_event,
        "attachment_ids": [a["id"] for a in attachments] if attachments else [],
        "attachments": attachments or [],
        "nonce": nonce,
        "reply_to_id": None if reply_to_id is None else str(reply_to_id),
        "referenced_message": referenced,
        "mentions": [str(m) for m in mentions] if mentions else [],
        "mention_channels": [str(m) for m in mention_channels] if mention_channels else [],
        "mention_everyone": bool(mention_everyone),
        "suppress_embeds": bool(suppress_embeds),
        "reactions": reactions or [],
        "pinned": bool(pinned),
        "created_at": iso(created_at),
        "edited_at": None if edited_at is None else iso(edited_at),
    }
