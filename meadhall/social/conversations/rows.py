"""Row types of the conversation tables (typed by a cast, as meadhall/guilds/rows.py explains)."""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict


class ParticipantRow(TypedDict):
    """One row of `dm_participants`."""

    channel_id: int
    user_id: int
    joined_at: datetime
