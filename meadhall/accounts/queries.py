"""SQL for accounts. Returns row mappings; never commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import backup_codes, security_events, sessions, users

Row = RowMapping


# ---- users -------------------------------------------------------------------------------------


async def get_user(conn: AsyncConnection, user_id: int) -> Row | None:
    return (await conn.execute(_GET_USER, {"user_id": user_id})).mappings().first()


async def find_user_by_username(conn: AsyncConnection, username_norm: str) -> Row | None:
    stmt = select(users).where(users.c.username_norm == username_norm)
    return (await conn.execute(stmt)).mappings().first()


async def find_user_by_email(conn: AsyncConnection, email_index: str) -> Row | None:
    stmt = select(users).where(users.c.email_index == email_index)
    return (await conn.execute(stmt)).mappings().first()


async def username_or_email_taken(conn: AsyncConnection, username_norm: str, email_index: str) -> tuple[bool, bool]:
    stmt = select(users.c.username_norm, users.c.email_index).where(
        or_(users.c.username_norm == username_norm, users.c.email_index == email_index)
    )
    rows = (await conn.execute(stmt)).all()
    return (any(r[0] == username_norm for r in rows), any(r[1] == email_index for r in rows))


async def insert_user(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(users).values(values))


async def update_user(conn: AsyncConnection, user_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(users).where(users.c.id == user_id).values(values))


async def claim_totp_step(conn: AsyncConnection, user_id: int, step: int) -> bool:
    """Record `step` as the last used TOTP step unless it (or a later one) already is."""
    result = await conn.execute(
        update(users)
        .where(users.c.id == user_id, or_(users.c.totp_last_step.is_(None), users.c.totp_last_step < step))
        .values(totp_last_step=step)
    )
    return result.rowcount == 1


async def enable_totp(conn: AsyncConnection, user_id: int, values: dict[str, Any]) -> bool:
    """Turn TOTP on unless it already is; False when another request did first."""
    result = await conn.execute(
        update(users).where(users.c.id == user_id, users.c.totp_enabled.is_(False)).values(values)
    )
    return result.rowcount == 1


async def count_admins(conn: AsyncConnection) -> int:
    stmt = select(func.count()).select_from(users).where(
        users.c.is_instance_admin.is_(True), users.c.deleted_at.is_(None)
    )
    return int((await conn.execute(stmt)).scalar_one())


# ---- sessions ----------------------------------------------------------------------------------


async def insert_session(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(sessions).values(values))


# Built once: statement construction costs several times the query itself (this runs on every request).
_SESSION_BY_DIGEST = (
    select(sessions, users.c.is_instance_admin, users.c.banned_at, users.c.deleted_at)
    .join(users, users.c.id == sessions.c.user_id)
    .where(
        or_(
            sessions.c.token_hash == bindparam("digest"),
            and_(sessions.c.prev_token_hash == bindparam("digest"), sessions.c.prev_valid_until > bindparam("now")),
        )
    )
)
_GET_USER = select(users).where(users.c.id == bindparam("user_id"))


async def session_with_user_by_digest(conn: AsyncConnection, digest: str, now: datetime) -> Row | None:
    """The session whose current token, or previous token still in its grace period, has this digest,
    joined with the account state needed to authorise the request (one query on the hot path)."""
    return (await conn.execute(_SESSION_BY_DIGEST, {"digest": digest, "now": now})).mappings().first()


async def get_session(conn: AsyncConnection, user_id: int, session_id: int) -> Row | None:
    stmt = select(sessions).where(sessions.c.user_id == user_id, sessions.c.id == session_id)
    return (await conn.execute(stmt)).mappings().first()


async def list_sessions(conn: AsyncConnection, user_id: int) -> list[Row]:
    stmt = (
        select(sessions)
        .where(sessions.c.user_id == user_id)
        .order_by(sessions.c.last_used_at.desc(), sessions.c.id.desc())
    )
    return list((await conn.execute(stmt)).mappings())


async def update_session(conn: AsyncConnection, session_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(sessions).where(sessions.c.id == session_id).values(values))


async def rotate_session_token(conn: AsyncConnection, session_id: int, digest: str, values: dict[str, Any]) -> bool:
    """Apply a rotation only while `digest` is still the current token (False: rotated concurrently)."""
    result = await conn.execute(
        update(sessions).where(sessions.c.id == session_id, sessions.c.token_hash == digest).values(values)
    )
    return result.rowcount == 1


async def delete_session(conn: AsyncConnection, session_id: int) -> None:
    await conn.execute(delete(sessions).where(sessions.c.id == session_id))


async def delete_sessions_of(conn: AsyncConnection, user_id: int, keep: int | None = None) -> list[int]:
    """Delete the user's sessions (except `keep`); returns the deleted ids."""
    cond = [sessions.c.user_id == user_id]
    if keep is not None:
        cond.append(sessions.c.id != keep)
    ids = list((await conn.execute(select(sessions.c.id).where(*cond))).scalars())
    if ids:
        await conn.execute(delete(sessions).where(*cond))
    return ids


# ---- backup codes ------------------------------------------------------------------------------


async def replace_backup_codes(conn: AsyncConnection, user_id: int, rows: list[dict[str, Any]]) -> None:
    await conn.execute(delete(backup_codes).where(backup_codes.c.user_id == user_id))
    if rows:
        await conn.execute(insert(backup_codes), rows)


async def unused_backup_codes(conn: AsyncConnection, user_id: int) -> list[Row]:
    stmt = select(backup_codes).where(backup_codes.c.user_id == user_id, backup_codes.c.used_at.is_(None))
    return list((await conn.execute(stmt)).mappings())


async def mark_backup_code_used(conn: AsyncConnection, user_id: int, code_id: int, now: datetime) -> bool:
    """Consume a code; False when another request consumed it first."""
    result = await conn.execute(
        update(backup_codes)
        .where(backup_codes.c.user_id == user_id, backup_codes.c.id == code_id, backup_codes.c.used_at.is_(None))
        .values(used_at=now)
    )
    return result.rowcount == 1


async def delete_backup_codes(conn: AsyncConnection, user_id: int) -> None:
    await conn.execute(delete(backup_codes).where(backup_codes.c.user_id == user_id))


# ---- security events ---------------------------------------------------------------------------


async def insert_security_event(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(security_events).values(values))


async def list_security_events(conn: AsyncConnection, user_id: int, before: int | None, limit: int) -> list[Row]:
    stmt = select(security_events).where(security_events.c.user_id == user_id)
    if before is not None:
        stmt = stmt.where(security_events.c.id < before)
    stmt = stmt.order_by(security_events.c.id.desc()).limit(limit + 1)
    return list((await conn.execute(stmt)).mappings())
