"""Event payload builders for roles (docs/reference/events.md)."""

from __future__ import annotations

from typing import Any

from meadhall.realtime.events import Event, EventType, event


def notify_role(type_: EventType, role_view: dict[str, Any], members: list[int]) -> Event:
    return event(type_, role_view, members)


def notify_role_delete(guild_id: int, role_id: int, members: list[int]) -> Event:
    return event(EventType.ROLE_DELETE, {"guild_id": str(guild_id), "role_id": str(role_id)}, members)
