"""Event payload builders for rooms (docs/reference/events.md)."""

from __future__ import annotations

from typing import Any

from meadhall.realtime.events import Event, EventType, event


def notify_channel(type_: EventType, channel_view: dict[str, Any], viewers: list[int]) -> Event:
    """CHANNEL_CREATE / CHANNEL_UPDATE / CHANNEL_DELETE with the Channel object."""
    return event(type_, channel_view, viewers)
