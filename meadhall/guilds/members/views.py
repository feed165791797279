"""Serialise membership rows into the Member object (OpenAPI: getMember)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from meadhall.accounts.views import UserColumns, iso_recalled, user_summary
from meadhall.core.clock import as_utc, iso
from meadhall.guilds.rows import MemberRow


def member_view(member: MemberRow, user: UserColumns, role_ids: list[int], now: datetime,
                summary: dict[str, Any] | None = None, style: dict[str, Any] | None = None) -> dict[str, Any]:
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
