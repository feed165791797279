"""The event of notification settings (docs/reference/events.md)."""

from __future__ import annotations

from typing import Any

from meadhall.realtime.audience import only
from meadhall.realtime.events import Event, EventType, event


def notify_notification_settings(setting: dict[str, Any], user_id: int) -> Event:
    """NOTIFICATION_SETTINGS_UPDATE: the changed setting, to every connection of its user (every node)."""
    return event(EventType.NOTIFICATION_SETTINGS_UPDATE, setting, only(user_id))
