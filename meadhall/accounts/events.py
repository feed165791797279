"""Event payload builders for account changes."""

from __future__ import annotations

from datetime import datetime

from meadhall.accounts.queries import UserRow
from meadhall.accounts.views import user_private, user_summary
from meadhall.core.crypto import Keys
from meadhall.realtime.audience import only
from meadhall.realtime.events import Event, EventType, event


def notify_user_update(row: UserRow, keys: Keys) -> Event:
    """USER_UPDATE: the private User object, to that user only."""
    return event(EventType.USER_UPDATE, user_private(row, keys), only(row["id"]))


def notify_went_offline(row: UserRow, now: datetime, receivers: list[int]) -> Event:
    """PRESENCE_UPDATE: the user's summary with status `offline`, to the given receivers (friends)."""
    summary = user_summary(row, now)
    return event(EventType.PRESENCE_UPDATE, {"user": {**summary, "status": "offline"}, "style": None}, receivers)
