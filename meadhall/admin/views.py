"""The AdminUser object (OpenAPI: listInstanceUsers, getInstanceUser): the private User object plus the
instance ban record, the soft-deletion time and two counts. Every administration answer that shows a user
(the list, the detail, ban and unban, 2FA reset, administrator grant and removal, soft deletion) builds it
here, so the shape is one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts import queries as account_queries
from meadhall.accounts.views import UserColumns, user_private, user_summary
from meadhall.admin.users import queries
from meadhall.core.clock import iso
from meadhall.core.crypto import DecryptionFailed, Keys, encrypt


def _user_fields(row: UserColumns, keys: Keys) -> dict[str, Any]:
    """The User fields. Soft deletion wipes the email (docs/admin.md): a deleted account whose stored email no
    longer opens shows an empty one."""
    try:
        return user_private(row, keys)
    except (DecryptionFailed, ValueError, TypeError):
        if row["deleted_at"] is None:
            raise
    blank = encrypt(keys.email_enc, "", aad=str(row["id"]).encode())
    return user_private({**row, "email_enc": blank}, keys)


def admin_user_view(row: UserColumns, keys: Keys, *, banned_by: Mapping[str, Any] | None, session_count: int,
                    guild_count: int) -> dict[str, Any]:
    """AdminUser from the user's row, the ban author's UserSummary (None when not banned or unknown) and the
    two counts."""
    return {
        **_user_fields(row, keys),
        "banned_at": iso(row["banned_at"]),
        "ban_reason": row["ban_reason"],
        "banned_by": dict(banned_by) if banned_by is not None else None,
        "deleted_at": iso(row["deleted_at"]),
        "session_count": int(session_count),
        "guild_count": int(guild_count),
    }


async def admin_user_views(conn: AsyncConnection, rows: Sequence[UserColumns], keys: Keys, now: datetime
                           ) -> list[dict[str, Any]]:
    """AdminUser for each row, in order: three queries whatever the number of rows (ban authors, session
    counts, guild counts)."""
    ids = [int(r["id"]) for r in rows]
    authors = await account_queries.select_summary_rows(
        conn, (int(r["banned_by"]) for r in rows if r["banned_by"] is not None))
    session_counts = await queries.count_sessions_by_user(conn, ids)
    guild_counts = await queries.count_guilds_by_user(conn, ids)
    out = []
    for row in rows:
        author = authors.get(row["banned_by"]) if row["banned_by"] is not None else None
        out.append(admin_user_view(
            row, keys, banned_by=user_summary(author, now) if author is not None else None,
            session_count=session_counts.get(int(row["id"]), 0), guild_count=guild_counts.get(int(row["id"]), 0)))
    return out


async def admin_user_of(conn: AsyncConnection, user_id: int, keys: Keys, now: datetime) -> dict[str, Any] | None:
    """AdminUser of one user as stored now (None when unknown)."""
    row = await account_queries.select_user(conn, user_id)
    if row is None:
        return None
    return (await admin_user_views(conn, [row], keys, now))[0]
