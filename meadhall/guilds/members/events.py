"""Event payload builders for members (docs/reference/events.md)."""

from __future__ import annotations

from meadhall.accounts.views import UserSummaryView
from meadhall.guilds.members.views import MemberView
from meadhall.realtime.events import Event, EventType, event


def notify_member_remove(guild_id: int, user_summary: UserSummaryView, members: list[int]) -> Event:
    return event(EventType.MEMBER_REMOVE, {"guild_id": str(guild_id), "user": user_summary}, members)


def notify_member(type_: EventType, member_view: MemberView, members: list[int]) -> Event:
    """MEMBER_ADD or MEMBER_UPDATE with the Member object."""
    return event(type_, member_view, members)
