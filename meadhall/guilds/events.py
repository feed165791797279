"""Event payload builders for guild changes (API.md 4.7)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import RowMapping

from meadhall.realtime.events import Event, event


def notify_guild_update(guild_view: dict[str, Any], members: list[int]) -> Event:
    return event("GUILD_UPDATE", guild_view, members)


def notify_guild_delete(guild_id: int, reason: str, users: list[int]) -> Event:
    return event("GUILD_DELETE", {"id": str(guild_id), "reason": reason}, users)


def notify_member_remove(guild_id: int, user_summary: dict[str, Any], members: list[int]) -> Event:
    return event("MEMBER_REMOVE", {"guild_id": str(guild_id), "user": user_summary}, members)


def notify_member(type_: str, member_view: dict[str, Any], members: list[int]) -> Event:
    """MEMBER_ADD or MEMBER_UPDATE with the Member object."""
    return event(type_, member_view, members)


def notify_role(type_: str, role_view: dict[str, Any], members: list[int]) -> Event:
    return event(type_, role_view, members)


def notify_role_delete(guild_id: int, role_id: int, members: list[int]) -> Event:
    return event("ROLE_DELETE", {"guild_id": str(guild_id), "role_id": str(role_id)}, members)


def notify_channel(type_: str, channel_view: dict[str, Any], viewers: list[int]) -> Event:
    """CHANNEL_CREATE / CHANNEL_UPDATE / CHANNEL_DELETE with the Channel object."""
    return event(type_, channel_view, viewers)


def changes(before: RowMapping, after: dict[str, Any]) -> dict[str, list[Any]]:
    """`{"field": [old, new]}` for audit data (API.md 2.29)."""
    out: dict[str, list[Any]] = {}
    for key, new in after.items():
        old = before[key] if key in before else None
        if old != new:
            out[key] = [_plain(old), _plain(new)]
    return out


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) and value > 2**53 else value
