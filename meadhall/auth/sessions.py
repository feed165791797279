"""Sessions: opaque tokens stored as SHA-256 digests, sliding lifetime, rotation with a 60 s grace
period for the old token, refresh of activity at most once a minute (OpenAPI: listSessions,
docs/architecture.md). The lowest identity layer: accounts builds sign-in on it, never the reverse."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from meadhall.auth import queries
from meadhall.auth.events import notify_session_invalidated
from meadhall.auth.queries import SessionRow, SessionWithAccount
from meadhall.auth.security import Client, record_security
from meadhall.auth.views import session_view
from meadhall.core.clock import as_utc
from meadhall.core.crypto import new_token, token_digest
from meadhall.core.errors import AppError
from meadhall.core.hooks import Hook
from meadhall.db import dialect
from meadhall.db.kept import VersionedCache
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime

STEP_UP_WINDOW = timedelta(minutes=10)
ACTIVITY_REFRESH = timedelta(minutes=1)
ROTATION_GRACE = timedelta(seconds=60)
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# Activity seen on the REST path, reported from the session refresh (at most once a minute per session, so
# no request pays for it otherwise): presence, a higher layer, registers here to notice a user coming
# online (docs/social.md). Called after the refresh committed, with (runtime, user id).
ActivityHook = Callable[[Runtime, int], Awaitable[None]]
session_activity: Hook[ActivityHook] = Hook()


@dataclass(frozen=True)
class Principal:
    """The signed-in caller of a request."""

    user_id: int
    session_id: int
    is_instance_admin: bool
    via_cookie: bool
    step_up_expires_at: datetime | None

    def stepped_up(self, now: datetime) -> bool:
        until = as_utc(self.step_up_expires_at)
        return until is not None and until > now


@dataclass(frozen=True)
class Authenticated:
    principal: Principal
    rotated_token: str | None  # set when this request rotated the token


@dataclass(frozen=True)
class IssuedSession:
    token: str
    row: SessionRow


def ttl(rt: Runtime) -> timedelta:
    return timedelta(days=rt.settings.SESSION_TTL_DAYS)


async def create_session(uow: UnitOfWork, user_id: int, client: Client, method: str) -> IssuedSession:
    """A new session; sign-in methods other than the CLI start stepped up (a fresh sign-in is a
    verification of its own)."""
    token = new_token()
    row: SessionRow = {
        "id": uow.next_id(),
        "user_id": user_id,
        "token_hash": token_digest(token),
        "token_created_at": uow.now,
        "prev_token_hash": None,
        "prev_valid_until": None,
        "created_at": uow.now,
        "last_used_at": uow.now,
        "ip": client.ip[:64],
        "user_agent": client.user_agent[:512] if client.user_agent else None,
        "method": method,
        "step_up_expires_at": None if method == "cli" else uow.now + STEP_UP_WINDOW,
    }
    await queries.insert_session(uow.conn, row)
    return IssuedSession(token, row)


async def authenticate(rt: Runtime, token: str, *, via_cookie: bool, client: Client) -> Authenticated:
    """Resolve a presented token to its principal or raise 401 / 403."""
    now = rt.clock.now()
    digest = token_digest(token)
    # Read before the session: a revocation committed in between shows as a newer epoch next time.
    # kept by trigger: see derived registry "auth_epoch"
    epoch = await dialect.auth_epoch(rt.engine)
    cached = SESSIONS.get(rt.engine, digest, epoch)
    if cached is not None and _at_rest(rt, cached, digest, now):
        return Authenticated(_principal(cached, via_cookie), None)
    try:
        row = await live_session(rt, digest, now)
    except AppError:
        SESSIONS.discard(rt.engine, digest)
        raise
    rotated, written = await _refresh(rt, row, digest, now, client)
    if rotated is None:
        SESSIONS.put(rt.engine, digest, epoch, cast(SessionWithAccount, {**row, **written}))
    return Authenticated(_principal(row, via_cookie), rotated)


async def live_session(rt: Runtime, digest: str, now: datetime) -> SessionWithAccount:
    """The session (with its account's state) presented by this token digest, read fresh; 401
    `auth.unauthorized` when unknown, of a deleted account or expired, 403 `user.banned` for a banned
    account. An expired session, and the session a banned account presents, are deleted."""
    async with rt.read() as uow:
        row = await queries.select_session_by_digest(uow.conn, digest, now)
    if row is None or row["deleted_at"] is not None:
        raise AppError("auth.unauthorized")
    last_used = as_utc(row["last_used_at"])
    assert last_used is not None
    if last_used + ttl(rt) <= now:
        async with rt.uow() as uow:
            await queries.delete_session(uow.conn, row["id"])
        raise AppError("auth.unauthorized", "Session expired")
    if row["banned_at"] is not None:
        # A banned account loses the session it presents; the next request with it gets 401.
        async with rt.uow() as uow:
            await queries.delete_session(uow.conn, row["id"])
        raise AppError("user.banned")
    return row


# ---- the session cache ---------------------------------------------------------------------------------
#
# A session presented again is answered from memory while nothing about it can have changed: the
# entry was read under the current `auth_epoch` (raised by database triggers on every revocation, token
# rotation, step-up, ban, account deletion or instance-administrator change, by any node or by hand) and
# nothing is due (expiry, activity refresh, rotation, the end of an old token's grace period); otherwise
# the session is read again as before. A cached `last_used_at` may be older than the stored one (another
# node refreshed it), which only makes the refresh due sooner here and never expires a live session:
# expiry and refresh are decided on a fresh read. It is the derived registry's cache "sessions" (db/derived.py).

# token digest -> the session as read then, under the auth epoch read before it (per engine).
SESSIONS: VersionedCache[str, int, SessionWithAccount] = VersionedCache("sessions")


def _at_rest(rt: Runtime, row: SessionWithAccount, digest: str, now: datetime) -> bool:
    """True when answering from `row` is exactly what a fresh read would do: valid token, nothing due."""
    if row["banned_at"] is not None or row["deleted_at"] is not None:
        return False
    if row["token_hash"] == digest:
        token_created = as_utc(row["token_created_at"])
        if token_created is None or now - token_created >= timedelta(hours=rt.settings.SESSION_ROTATE_HOURS):
            return False
    else:
        grace = as_utc(row["prev_valid_until"])
        if row["prev_token_hash"] != digest or grace is None or grace <= now:
            return False
    last_used = as_utc(row["last_used_at"])
    return last_used is not None and now - last_used < ACTIVITY_REFRESH and last_used + ttl(rt) > now


def _principal(row: SessionWithAccount, via_cookie: bool) -> Principal:
    return Principal(
        user_id=row["user_id"],
        session_id=row["id"],
        is_instance_admin=bool(row["is_instance_admin"]),
        via_cookie=via_cookie,
        step_up_expires_at=as_utc(row["step_up_expires_at"]),
    )


async def _refresh(rt: Runtime, row: SessionWithAccount, digest: str, now: datetime, client: Client
                   ) -> tuple[str | None, dict[str, Any]]:
    """Activity refresh (at most once a minute) and token rotation (older than SESSION_ROTATE_HOURS):
    (the new token if rotated, the values written)."""
    values: dict[str, Any] = {}
    rotated: str | None = None
    token_created = as_utc(row["token_created_at"])
    assert token_created is not None
    if row["token_hash"] == digest and now - token_created >= timedelta(hours=rt.settings.SESSION_ROTATE_HOURS):
        rotated = new_token()
        values.update(
            token_hash=token_digest(rotated),
            token_created_at=now,
            prev_token_hash=digest,
            prev_valid_until=now + ROTATION_GRACE,
        )
    last_used = as_utc(row["last_used_at"])
    assert last_used is not None
    if now - last_used >= ACTIVITY_REFRESH or values:
        values.update(last_used_at=now, ip=client.ip[:64])
    if not values:
        return None, values
    async with rt.uow() as uow:
        if rotated is not None and not await queries.update_session_token(uow.conn, row["id"], digest, values):
            # A concurrent request presenting the same token rotated it first and answers with the new
            # token; a second new token here would replace that one and log the client out.
            rotated = None
            values = {"last_used_at": now, "ip": client.ip[:64]}
        if rotated is None:
            await queries.update_session(uow.conn, row["id"], values)
        await queries.update_last_seen(uow.conn, row["user_id"], now)
    for hook in session_activity:
        await hook(rt, row["user_id"])
    return rotated, values


# ---- session management ------------------------------------------------------------------------


async def access_own_sessions(rt: Runtime, principal: Principal) -> list[dict[str, Any]]:
    async with rt.read() as uow:
        rows = await queries.select_sessions(uow.conn, principal.user_id)
    # Expired sessions are deleted only when presented; until then they must not be listed as live.
    now, life = rt.clock.now(), ttl(rt)
    live = [r for r in rows if _used_within(r, life, now)]
    return [session_view(r, life, principal.session_id) for r in live]


def _used_within(row: SessionRow, life: timedelta, now: datetime) -> bool:
    last_used = as_utc(row["last_used_at"])
    return last_used is not None and last_used + life > now


async def do_revoke_session(rt: Runtime, principal: Principal, session_id: int | None, client: Client) -> None:
    async with rt.uow() as uow:
        row = None if session_id is None else await queries.select_session(uow.conn, principal.user_id, session_id)
        if row is None:
            raise AppError("session.not_found")
        await queries.delete_session(uow.conn, row["id"])
        await record_security(uow, "session.revoke", principal.user_id, client, {"session_id": str(row["id"])})
        uow.emit(*notify_session_invalidated(principal.user_id, [row["id"]], "revoked"))


async def do_logout(rt: Runtime, principal: Principal) -> None:
    async with rt.uow() as uow:
        await queries.delete_session(uow.conn, principal.session_id)
        uow.emit(*notify_session_invalidated(principal.user_id, [principal.session_id], "logout"))


async def do_logout_all(rt: Runtime, principal: Principal, client: Client) -> None:
    async with rt.uow() as uow:
        ids = await queries.delete_sessions_of(uow.conn, principal.user_id)
        await record_security(uow, "logout_all", principal.user_id, client)
        uow.emit(*notify_session_invalidated(principal.user_id, ids, "logout_all"))


async def revoke_all(uow: UnitOfWork, user_id: int, reason: str, keep: int | None = None) -> list[int]:
    """Delete the user's sessions (all, or all but `keep`) and tell their connections why."""
    ids = await queries.delete_sessions_of(uow.conn, user_id, keep=keep)
    if ids:
        uow.emit(*notify_session_invalidated(user_id, ids, reason))
    return ids
