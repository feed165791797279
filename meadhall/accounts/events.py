"""Event payload builders for account changes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from meadhall.accounts.queries import UserRow
from meadhall.accounts.views import UserColumns, user_private, user_summary
from meadhall.core.crypto import Keys
from meadhall.realtime.audience import only
from meadhall.realtime.events import Event, EventType, event


def notify_user_update(row: UserRow, keys: Keys, private: dict[str, Any] | None = None) -> Event:
    """USER_UPDATE: the private User object (`private`, when the caller made it already), to that user only."""
    return event(EventType.USER_UPDATE, user_private(row, keys) if private is None else private, only(row["id"]))


def presence_view(row: UserColumns, now: datetime, style: dict[str, Any] | None = None) -> dict[str, Any]:
    """A presence as friends see it (PRESENCE_UPDATE, READY `presences`): the user's summary, whose status is
    the effective one, and their `friends`-scope style (`presence.friends_styles`), null when none."""
    return {"user": user_summary(row, now), "style": style}


def notify_presence(row: UserColumns, now: datetime, receivers: list[int], style: dict[str, Any] | None = None
                    ) -> Event:
    """PRESENCE_UPDATE: the user's current presence, to the given receivers (friends)."""
    return event(EventType.PRESENCE_UPDATE, presence_view(row, now, style), receivers)


def notify_went_offline(row: UserRow, now: datetime, receivers: list[int], style: dict[str, Any] | None = None
                        ) -> Event:
    """PRESENCE_UPDATE: the user's summary with status `offline` (and no custom status, as offline users
    show none), to the given receivers (friends)."""
    summary = user_summary(row, now)
    offline = {**summary, "status": "offline", "custom_status": None, "custom_status_emoji": None}
    return event(EventType.PRESENCE_UPDATE, {"user": offline, "style": style}, receivers)
