"""Serialise message rows into the Message object of API.md 2.15."""

from __future__ import annotations

from typing import Any

from sqlalchemy import RowMapping

from meadhall.core.clock import iso


def _sid(value: int | None) -> str | None:
    return None if value is None else str(value)


def webhook_snapshot(row: RowMapping) -> dict[str, Any] | None:
    if row["webhook_id"] is None:
        return None
    return {"id": str(row["webhook_id"]), "name": row["webhook_name"], "avatar": row["webhook_avatar"]}


def message_view(
    row: RowMapping,
    *,
    author: dict[str, Any] | None,
    attachments: list[dict[str, Any]] | None = None,
    reactions: list[dict[str, Any]] | None = None,
    referenced: dict[str, Any] | None = None,
) -> dict[str, Any]:
    attachments = attachments or []
    return {
        "id": str(row["id"]),
        "channel_id": str(row["channel_id"]),
        "guild_id": _sid(row["guild_id"]),
        "author": author,
        "webhook": webhook_snapshot(row),
        "content": row["content"],
        "kind": row["kind"],
        "recipient_id": _sid(row["recipient_id"]),
        "system_event": row["system_event"],
        "attachment_ids": [a["id"] for a in attachments],
        "attachments": attachments,
        "nonce": row["nonce"],
        "reply_to_id": _sid(row["reply_to_id"]),
        "referenced_message": referenced,
        "mentions": [str(m) for m in row["mentions"] or []],
        "mention_channels": [str(m) for m in row["mention_channels"] or []],
        "mention_everyone": bool(row["mention_everyone"]),
        "suppress_embeds": bool(row["suppress_embeds"]),
        "reactions": reactions or [],
        "pinned": bool(row["pinned"]),
        "created_at": iso(row["created_at"]),
        "edited_at": iso(row["edited_at"]),
    }
