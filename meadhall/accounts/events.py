"""Event payload builders for account changes."""

from __future__ import annotations

from sqlalchemy import RowMapping

from meadhall.accounts.views import user_private
from meadhall.core.crypto import Keys
from meadhall.realtime.audience import only
from meadhall.realtime.events import Event, event


def notify_user_update(row: RowMapping, keys: Keys) -> Event:
    """USER_UPDATE: the private User object, to that user only."""
    return event("USER_UPDATE", user_private(row, keys), only(row["id"]))
