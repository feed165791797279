"""Row types of the call tables (typed by a cast, as meadhall/guilds/rows.py explains).

Transitions change a call in memory and in the database together (`transitions.LiveCall`), so they hold
copies (`dict(row)`), not the read-only rows queries return."""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict


class CallRow(TypedDict):
    """One row of `calls`."""

    id: int
    channel_id: int
    initiator_id: int
    status: str
    media: str
    ongoing_channel_id: int | None
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    end_reason: str | None


class CallParticipantRow(TypedDict):
    """One row of `call_participants`."""

    call_id: int
    user_id: int
    state: str
    microphone: bool
    camera: bool
    screen: bool
    joined_at: datetime | None
    left_at: datetime | None
