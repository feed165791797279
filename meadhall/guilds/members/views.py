"""Serialise membership rows into the Member object (OpenAPI: getMember)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from meadhall.accounts.views import UserColumns, UserSummaryView, iso_recalled, user_summary
from meadhall.core.clock import as_utc, iso
from meadhall.guilds.rows import MemberRow


class MemberView(TypedDict):
    """The Member object (guilds.members.schemas.Member), keys in the order the API writes them."""

    guild_id: str
    user: UserSummaryView
    nick: str | None
    roles: list[str]
    joined_at: str
    timeout_until: str | None
    style: dict[str, Any] | None


def member_view(member: MemberRow, user: UserColumns, role_ids: list[int], now: datetime,
                summary: UserSummaryView | None = None, style: dict[str, Any] | None = None) -> MemberView:
    """`summary`: the user's summary when the caller already made it (one user in many guilds); `style`:
    the member's guild-scope personal style (meadhall.guilds.styles.views), if any."""
    until = member["timeout_until"]
    if until is not None:  # most members never had a timeout: a profile change makes this per guild of the user
        until = as_utc(until)
    return {
        "guild_id": str(member["guild_id"]),
        "user": user_summary(user, now) if summary is None else summary,
        "nick": member["nick"],
        "roles": [str(r) for r in sorted(role_ids)] if role_ids else [],
        "joined_at": iso_recalled(member["joined_at"]),
        "timeout_until": iso(until) if until is not None and until > now else None,
        "style": style,
    }
