"""Serialise account rows into the API's user and security-event objects (OpenAPI: getMe, getUser,
listSecurityEvents)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, TypedDict

from meadhall.auth.queries import SecurityEventRow
from meadhall.core.clock import iso
from meadhall.core.crypto import Keys, decrypt

# The user views read the columns of `users` (accounts.queries.UserRow); other domains pass rows of
# their own joins that carry those columns, so the views accept any mapping of them.
UserColumns = Mapping[str, Any]

PRESENCE_TIMEOUT = timedelta(minutes=2)

# `iso` remembered for the instants lists show again and again (accounts' created_at, relationships' since):
# formatting cost more than the rest of a summary, and a pure function's memo can never be stale. Bounded,
# least recently used out first: about 250 bytes an entry, 4 MiB in all.
iso_recalled = functools.lru_cache(maxsize=1 << 14)(iso)


class UserSummaryView(TypedDict):
    """The UserSummary object (accounts.schemas.UserSummary), keys in the order the API writes them."""

    id: str
    username: str
    display_name: str
    avatar: str | None
    bio: str
    status: str
    custom_status: str | None
    custom_status_emoji: str | None
    badges: list[str]
    created_at: str
    deleted: bool


def badges(row: UserColumns) -> list[str]:
    # `imported`: the account holds history brought from another service (3.21) and nobody signs in as it.
    shown = ["instance_admin"] if row["is_instance_admin"] else []
    return [*shown, "imported"] if row["imported"] else shown


def email_of(row: UserColumns, keys: Keys) -> str:
    return decrypt(keys.email_enc, row["email_enc"], aad=str(row["id"]).encode())


def _reads_offline(row: UserColumns, offline_before: datetime, offline_before_naive: datetime) -> bool:
    """What others see as offline: `invisible`, an imported author (never online, whatever time its import
    wrote), or more than 2 minutes without activity (`last_seen_at` before the cut-off, worked out once by the
    caller: a READY makes a thousand summaries). SQLite hands back naive UTC values, compared with the naive
    cut-off instead of being made aware one by one."""
    last_seen = row["last_seen_at"]
    return (row["status"] == "invisible" or row["imported"] or last_seen is None
            or last_seen < (offline_before_naive if last_seen.tzinfo is None else offline_before))


def user_private(row: UserColumns, keys: Keys) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "username": row["username"],
        "email": email_of(row, keys),
        "display_name": row["display_name"],
        "bio": row["bio"],
        "status": row["status"],
        "custom_status": row["custom_status"],
        "custom_status_emoji": row["custom_status_emoji"],
        "locale": row["locale"],
        "timezone": row["timezone"],
        "totp_enabled": bool(row["totp_enabled"]),
        "onboarding_completed_at": iso(row["onboarding_completed_at"]),
        "is_instance_admin": bool(row["is_instance_admin"]),
        "badges": badges(row),
        "avatar": str(row["avatar_file_id"]) if row["avatar_file_id"] else None,
        "last_seen_at": iso(row["last_seen_at"]),
        "password_reset_required": bool(row["password_reset_required"]),
        "created_at": iso(row["created_at"]),
    }


def user_summary(row: UserColumns, now: datetime) -> UserSummaryView:
    offline_before = now - PRESENCE_TIMEOUT
    return _summary(row, offline_before, offline_before.replace(tzinfo=None))


def _deleted_summary(row: UserColumns) -> UserSummaryView:
    return {
        "id": str(row["id"]),
        "username": f"deleted-{row['id']}",
        "display_name": "Deleted user",
        "avatar": None,
        "bio": "",
        "status": "offline",
        "custom_status": None,
        "custom_status_emoji": None,
        "badges": [],
        "created_at": iso(row["created_at"]),
        "deleted": True,
    }


def _summary(row: UserColumns, offline_before: datetime, offline_before_naive: datetime) -> UserSummaryView:
    """user_summary with the presence cut-off worked out once by the caller."""
    if row["deleted_at"] is not None:
        return _deleted_summary(row)
    if _reads_offline(row, offline_before, offline_before_naive):
        status = "offline"
        custom_status = custom_status_emoji = None
    else:
        status = str(row["status"])
        custom_status, custom_status_emoji = row["custom_status"], row["custom_status_emoji"]
    avatar = row["avatar_file_id"]
    return {
        "id": str(row["id"]),
        "username": row["username"],
        "display_name": row["display_name"],
        "avatar": str(avatar) if avatar else None,
        "bio": row["bio"],
        "status": status,
        "custom_status": custom_status,
        "custom_status_emoji": custom_status_emoji,
        "badges": badges(row),
        "created_at": iso_recalled(row["created_at"]),
        "deleted": False,
    }


class Summaries(dict[int, UserSummaryView]):
    """User id -> UserSummary, each made once for one answer at one instant: READY shows the same friend in
    the friends list, the presences, conversations and last messages (1,000 friends: over a thousand
    summaries saved). Never kept beyond the answer it was made for, so nothing can go stale."""

    def __init__(self, now: datetime) -> None:
        super().__init__()
        self.now = now
        self._offline_before = now - PRESENCE_TIMEOUT
        self._offline_before_naive = self._offline_before.replace(tzinfo=None)

    def of(self, row: UserColumns) -> UserSummaryView:
        found = self.get(row["id"])
        if found is None:
            found = self[row["id"]] = _summary(row, self._offline_before, self._offline_before_naive)
        return found


def security_event_view(row: SecurityEventRow) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "user_id": str(row["user_id"]) if row["user_id"] is not None else None,
        "type": row["type"],
        "ip": row["ip"],
        "user_agent": row["user_agent"],
        "data": row["data"] or {},
        "created_at": iso(row["created_at"]),
    }
