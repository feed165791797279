"""Serialise webhook rows into the Webhook object (OpenAPI: getWebhook)."""

from __future__ import annotations

from typing import Any

from meadhall.core.clock import iso
from meadhall.messages.webhooks.queries import WebhookRow


def webhook_url(origin: str, webhook_id: int, token: str) -> str:
    return f"{origin.rstrip('/')}/api/v1/webhooks/{webhook_id}/{token}"


def webhook_view(row: WebhookRow, *, token: str | None = None, origin: str | None = None) -> dict[str, Any]:
    """`token` and `url` only in the answers that make a new token (create, regeneration)."""
    return {
        "id": str(row["id"]),
        "guild_id": str(row["guild_id"]),
        "channel_id": str(row["channel_id"]),
        "name": row["name"],
        "avatar": None if row["avatar_file_id"] is None else str(row["avatar_file_id"]),
        "creator_id": str(row["creator_id"]),
        "created_at": iso(row["created_at"]),
        "token": token,
        "url": webhook_url(origin, row["id"], token) if token is not None and origin is not None else None,
    }
