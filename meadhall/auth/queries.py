"""SQL for sessions and security events. Returns typed rows; never commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import and_, bindparam, delete, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import security_events, sessions, users


class SessionRow(TypedDict):
    """One row of `sessions`."""

    id: int
    user_id: int
    token_hash: str
    token_created_at: datetime
    prev_token_hash: str | None
    prev_valid_until: datetime | None
    created_at: datetime
    last_used_at: datetime
    ip: str
    user_agent: str | None
    method: str
    step_up_expires_at: datetime | None


class SessionWithAccount(SessionRow):
    """A session with the account state that decides whether it may be used."""

    is_instance_admin: bool
    banned_at: datetime | None
    deleted_at: datetime | None


class SecurityEventRow(TypedDict):
    """One row of `security_events`."""

    id: int
    user_id: int | None
    type: str
    ip: str
    user_agent: str | None
    data: dict[str, Any]
    created_at: datetime


# The rows below are typed by a cast, not a copy: a RowMapping answers `row["column"]` like the
# TypedDict it is declared as, and copying every row into a dict would cost on the request path.


async def insert_session(conn: AsyncConnection, values: SessionRow) -> None:
    await conn.execute(insert(sessions).values(dict(values)))


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


async def select_session_by_digest(conn: AsyncConnection, digest: str, now: datetime) -> SessionWithAccount | None:
    """The session whose current token, or previous token still in its grace period, has this digest,
    joined with the account state needed to authorise the request (one query on the hot path)."""
    row = (await conn.execute(_SESSION_BY_DIGEST, {"digest": digest, "now": now})).mappings().first()
    return cast("SessionWithAccount | None", row)


async def select_session(conn: AsyncConnection, user_id: int, session_id: int) -> SessionRow | None:
    stmt = select(sessions).where(sessions.c.user_id == user_id, sessions.c.id == session_id)
    return cast("SessionRow | None", (await conn.execute(stmt)).mappings().first())


async def select_sessions(conn: AsyncConnection, user_id: int) -> list[SessionRow]:
    stmt = (
        select(sessions)
        .where(sessions.c.user_id == user_id)
        .order_by(sessions.c.last_used_at.desc(), sessions.c.id.desc())
    )
    return cast("list[SessionRow]", list((await conn.execute(stmt)).mappings()))


async def update_session(conn: AsyncConnection, session_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(sessions).where(sessions.c.id == session_id).values(values))


async def update_session_token(conn: AsyncConnection, session_id: int, digest: str, values: dict[str, Any]) -> bool:
    """Apply a rotation only while `digest` is still the current token (False: rotated concurrently)."""
    result = await conn.execute(
        update(sessions).where(sessions.c.id == session_id, sessions.c.token_hash == digest).values(values)
    )
    return result.rowcount == 1


async def update_last_seen(conn: AsyncConnection, user_id: int, now: datetime) -> None:
    """The account's activity time, written with the session's activity refresh."""
    await conn.execute(update(users).where(users.c.id == user_id).values(last_seen_at=now))


async def delete_session(conn: AsyncConnection, session_id: int) -> None:
    await conn.execute(delete(sessions).where(sessions.c.id == session_id))


async def delete_sessions_of(conn: AsyncConnection, user_id: int, keep: int | None = None) -> list[int]:
    """Delete the user's sessions (except `keep`); returns the deleted ids."""
    cond = [sessions.c.user_id == user_id]
    if keep is not None:
        cond.append(sessions.c.id != keep)
    ids = [int(i) for i in (await conn.execute(select(sessions.c.id).where(*cond))).scalars()]
    if ids:
        await conn.execute(delete(sessions).where(*cond))
    return ids


async def insert_security_event(conn: AsyncConnection, values: SecurityEventRow) -> None:
    await conn.execute(insert(security_events).values(dict(values)))


async def select_security_events(
    conn: AsyncConnection, user_id: int, before: int | None, limit: int
) -> list[SecurityEventRow]:
    """The user's security events, newest first, one more than `limit` (to tell whether more exist)."""
    stmt = select(security_events).where(security_events.c.user_id == user_id)
    if before is not None:
        stmt = stmt.where(security_events.c.id < before)
    stmt = stmt.order_by(security_events.c.id.desc()).limit(limit + 1)
    return cast("list[SecurityEventRow]", list((await conn.execute(stmt)).mappings()))
