"""SQL for accounts: users and backup codes. Returns typed rows; never commits."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import bindparam, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import backup_codes, users


class UserRow(TypedDict):
    """One row of `users`."""

    id: int
    username: str
    username_norm: str
    email_enc: bytes
    email_index: str
    password_hash: str
    display_name: str
    display_name_norm: str
    bio: str
    status: str
    custom_status: str | None
    custom_status_emoji: str | None
    locale: str
    timezone: str
    avatar_file_id: int | None
    totp_enabled: bool
    totp_secret_enc: bytes | None
    totp_last_step: int | None
    totp_pending_enc: bytes | None
    totp_pending_expires_at: datetime | None
    onboarding_completed_at: datetime | None
    is_instance_admin: bool
    imported: bool
    password_reset_required: bool
    last_seen_at: datetime
    created_at: datetime
    banned_at: datetime | None
    ban_reason: str | None
    banned_by: int | None
    deleted_at: datetime | None
    style_count: int


class SummaryRow(TypedDict):
    """The columns of `users` a public summary reads (accounts.views.user_summary): lists of many users
    select only these (a READY of 1,000 friends read every column, hashes and ciphertexts included)."""

    id: int
    username: str
    display_name: str
    bio: str
    status: str
    custom_status: str | None
    custom_status_emoji: str | None
    avatar_file_id: int | None
    is_instance_admin: bool
    imported: bool
    last_seen_at: datetime
    created_at: datetime
    deleted_at: datetime | None


SUMMARY_COLUMNS = tuple(users.c[name] for name in SummaryRow.__annotations__)


class BackupCodeRow(TypedDict):
    """One row of `backup_codes`."""

    id: int
    user_id: int
    code_hash: str
    used_at: datetime | None


# Rows are typed by a cast, not a copy: a RowMapping answers `row["column"]` like the TypedDict it is
# declared as, and copying each row into a dict would cost on the request path.
_SELECT_USER = select(users).where(users.c.id == bindparam("user_id"))


# ---- users -------------------------------------------------------------------------------------


async def select_user(conn: AsyncConnection, user_id: int) -> UserRow | None:
    return cast("UserRow | None", (await conn.execute(_SELECT_USER, {"user_id": user_id})).mappings().first())


async def select_users_by_ids(conn: AsyncConnection, user_ids: Iterable[int]) -> dict[int, UserRow]:
    """user id -> row for many users in one query (the authors of a list: inviters, ban authors)."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    rows = (await conn.execute(select(users).where(users.c.id.in_(ids)))).mappings()
    return {row["id"]: cast(UserRow, row) for row in rows}


async def select_summary_rows(conn: AsyncConnection, user_ids: Iterable[int]) -> dict[int, SummaryRow]:
    """user id -> the summary columns, for many users in one query (the participants of a conversation list)."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    rows = (await conn.execute(select(*SUMMARY_COLUMNS).where(users.c.id.in_(ids)))).mappings()
    return {row["id"]: cast(SummaryRow, row) for row in rows}


async def select_user_by_username(conn: AsyncConnection, username_norm: str) -> UserRow | None:
    stmt = select(users).where(users.c.username_norm == username_norm)
    return cast("UserRow | None", (await conn.execute(stmt)).mappings().first())


async def select_user_by_email(conn: AsyncConnection, email_index: str) -> UserRow | None:
    stmt = select(users).where(users.c.email_index == email_index)
    return cast("UserRow | None", (await conn.execute(stmt)).mappings().first())


async def select_username_email_taken(conn: AsyncConnection, username_norm: str, email_index: str) -> tuple[bool, bool]:
    stmt = select(users.c.username_norm, users.c.email_index).where(
        or_(users.c.username_norm == username_norm, users.c.email_index == email_index)
    )
    rows = (await conn.execute(stmt)).all()
    return (any(r[0] == username_norm for r in rows), any(r[1] == email_index for r in rows))


async def insert_user(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(users).values(values))


async def update_user(conn: AsyncConnection, user_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(users).where(users.c.id == user_id).values(values))


# Built once: the SET clause comes from the keys of the values at execution (one cached compilation per set of
# columns), and the written row comes back in the same statement (a profile change read it again after).
_UPDATE_USER_RETURNING = update(users).where(users.c.id == bindparam("user_id")).returning(*users.c)


async def update_user_returning(conn: AsyncConnection, user_id: int, values: dict[str, Any]) -> UserRow | None:
    """Write `values` (column -> value, at least one) and return the row as written; None when no such user."""
    result = await conn.execute(_UPDATE_USER_RETURNING, {**values, "user_id": user_id})
    return cast("UserRow | None", result.mappings().first())


async def select_visible_users_seen_since(conn: AsyncConnection, since: datetime) -> list[UserRow]:
    """Live, not invisible accounts whose stored activity is newer than `since` (the presence sweep)."""
    stmt = select(users).where(
        users.c.last_seen_at > since, users.c.deleted_at.is_(None), users.c.status != "invisible"
    )
    return cast("list[UserRow]", list((await conn.execute(stmt)).mappings()))


async def update_totp_step(conn: AsyncConnection, user_id: int, step: int) -> bool:
    """Record `step` as the last used TOTP step unless it (or a later one) already is."""
    result = await conn.execute(
        update(users)
        .where(users.c.id == user_id, or_(users.c.totp_last_step.is_(None), users.c.totp_last_step < step))
        .values(totp_last_step=step)
    )
    return result.rowcount == 1


async def update_totp_enabled(conn: AsyncConnection, user_id: int, values: dict[str, Any]) -> bool:
    """Turn TOTP on unless it already is; False when another request did first."""
    result = await conn.execute(
        update(users).where(users.c.id == user_id, users.c.totp_enabled.is_(False)).values(values)
    )
    return result.rowcount == 1


async def select_admin_count(conn: AsyncConnection) -> int:
    stmt = select(func.count()).select_from(users).where(
        users.c.is_instance_admin.is_(True), users.c.deleted_at.is_(None)
    )
    return int((await conn.execute(stmt)).scalar_one())


# ---- backup codes ------------------------------------------------------------------------------


async def insert_backup_codes(conn: AsyncConnection, user_id: int, rows: list[BackupCodeRow]) -> None:
    """Replace the user's backup codes with `rows`."""
    await conn.execute(delete(backup_codes).where(backup_codes.c.user_id == user_id))
    if rows:
        await conn.execute(insert(backup_codes), [dict(r) for r in rows])


async def select_unused_backup_codes(conn: AsyncConnection, user_id: int) -> list[BackupCodeRow]:
    stmt = select(backup_codes).where(backup_codes.c.user_id == user_id, backup_codes.c.used_at.is_(None))
    return cast("list[BackupCodeRow]", list((await conn.execute(stmt)).mappings()))


async def update_backup_code_used(conn: AsyncConnection, user_id: int, code_id: int, now: datetime) -> bool:
    """Consume a code; False when another request consumed it first."""
    result = await conn.execute(
        update(backup_codes)
        .where(backup_codes.c.user_id == user_id, backup_codes.c.id == code_id, backup_codes.c.used_at.is_(None))
        .values(used_at=now)
    )
    return result.rowcount == 1


async def delete_backup_codes(conn: AsyncConnection, user_id: int) -> None:
    await conn.execute(delete(backup_codes).where(backup_codes.c.user_id == user_id))


async def select_user_imported(conn: AsyncConnection, user_id: int) -> bool:
    """Whether the user is an imported author (False for no such user)."""
    stmt = select(users.c.imported).where(users.c.id == user_id)
    return bool((await conn.execute(stmt)).scalar_one_or_none())
