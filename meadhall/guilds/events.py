"""Event payload builders for guild changes (docs/reference/events.md)."""

from __future__ import annotations

from typing import Any

from meadhall.realtime.events import Event, EventType, event


def notify_guild_update(guild_view: dict[str, Any], members: list[int]) -> Event:
    return event(EventType.GUILD_UPDATE, guild_view, members)


def notify_guild_delete(guild_id: int, reason: str, users: list[int]) -> Event:
    return event(EventType.GUILD_DELETE, {"id": str(guild_id), "reason": reason}, users)


def notify_guild_create(snapshot: dict[str, Any], users: list[int]) -> Event:
    """The guild as the receiver sees it: to its creator, or to a member who just joined."""
    return event(EventType.GUILD_CREATE, snapshot, users)
