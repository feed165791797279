"""Registration, password sign-in, step-up and password change (OpenAPI: register, login, stepUp, changePassword;
docs/architecture.md)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from meadhall.accounts import lockout, queries
from meadhall.accounts.passwords import check_password, hash_matches
from meadhall.accounts.queries import UserRow
from meadhall.accounts.secondfactor import SecondFactor, check_second_factor, verify_second_factor
from meadhall.accounts.views import user_private
from meadhall.auth import queries as session_queries
from meadhall.auth.security import Client, record_security
from meadhall.auth.sessions import (
    STEP_UP_WINDOW,
    IssuedSession,
    Principal,
    create_session,
    revoke_all,
    ttl,
)
from meadhall.auth.views import session_view
from meadhall.core.clock import iso
from meadhall.core.crypto import blind_index, encrypt
from meadhall.core.errors import AppError
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime


@dataclass(frozen=True)
class NewAccount:
    username: str
    email: str
    password: str
    display_name: str | None = None
    locale: str | None = None
    timezone: str | None = None
    is_instance_admin: bool = False


@dataclass(frozen=True)
class SignIn:
    user: dict[str, Any]
    session: IssuedSession

    def body(self, rt: Runtime) -> dict[str, Any]:
        return {
            "user": self.user,
            "token": self.session.token,
            "session": session_view(self.session.row, ttl(rt), self.session.row["id"]),
            "totp_enabled": self.user["totp_enabled"],
        }


def email_lookup(rt: Runtime, email: str) -> str:
    return blind_index(rt.keys.email_index, norm(email))


async def hash_password(rt: Runtime, password: str) -> str:
    """Hash before opening a write transaction: a slow hash inside one would hold the SQLite write lock."""
    return str(await rt.off_loop(rt.password_hasher.hash, password))


async def do_create_user(rt: Runtime, uow: UnitOfWork, new: NewAccount, password_hash: str) -> UserRow:
    """Insert an account; 409 when the username or email exists in any letter case."""
    username_norm, email_index = norm(new.username), email_lookup(rt, new.email)
    username_taken, email_taken = await queries.select_username_email_taken(uow.conn, username_norm, email_index)
    if username_taken:
        raise AppError("user.username_taken")
    if email_taken:
        raise AppError("user.email_taken")
    user_id = uow.next_id()
    display_name = new.display_name or new.username
    try:
        # A concurrent registration can take the name or address between the check above and this insert
        # (PostgreSQL, READ COMMITTED): the unique indexes decide, in a savepoint so that we can still look.
        async with uow.conn.begin_nested():
            await queries.insert_user(
                uow.conn,
                {
                    "id": user_id,
                    "username": new.username,
                    "username_norm": username_norm,
                    "email_enc": encrypt(rt.keys.email_enc, new.email, aad=str(user_id).encode()),
                    "email_index": email_index,
                    "password_hash": password_hash,
                    "display_name": display_name,
                    "display_name_norm": norm(display_name),
                    "bio": "",
                    "status": "online",
                    "locale": new.locale or "en",
                    "timezone": new.timezone or "Europe/Moscow",
                    "totp_enabled": False,
                    "is_instance_admin": new.is_instance_admin,
                    "password_reset_required": False,
                    "last_seen_at": uow.now,
                    "created_at": uow.now,
                },
            )
    except IntegrityError:
        username_taken, _ = await queries.select_username_email_taken(uow.conn, username_norm, email_index)
        raise AppError("user.username_taken" if username_taken else "user.email_taken") from None
    row = await queries.select_user(uow.conn, user_id)
    assert row is not None
    return row


async def do_register(rt: Runtime, new: NewAccount, client: Client) -> SignIn:
    if not rt.settings.REGISTRATION_ENABLED:
        raise AppError("auth.registration_disabled")
    check_password(new.password, rt.settings.LEAKED_PASSWORDS_FILE)
    password_hash = await hash_password(rt, new.password)
    async with rt.uow() as uow:
        row = await do_create_user(rt, uow, new, password_hash)
        issued = await create_session(uow, row["id"], client, "password")
        await record_security(uow, "register", row["id"], client)
        user = user_private(row, rt.keys)
    return SignIn(user, issued)


# ---- sign-in -----------------------------------------------------------------------------------


async def find_by_login(rt: Runtime, uow: UnitOfWork, login: str) -> UserRow | None:
    """Username, or email when the value contains '@'; deleted accounts do not exist for sign-in."""
    login = login.strip()
    if "@" in login:
        row = await queries.select_user_by_email(uow.conn, email_lookup(rt, login))
    else:
        row = await queries.select_user_by_username(uow.conn, norm(login))
    return None if row is None or row["deleted_at"] is not None else row


# One hash per runtime (its hasher's parameters), made on first use: comparing an unknown login's password
# with it costs what a real comparison costs, so timing does not tell whether an account exists.
_DUMMY_HASHES: weakref.WeakKeyDictionary[Runtime, str] = weakref.WeakKeyDictionary()


async def _dummy_hash(rt: Runtime) -> str:
    cached = _DUMMY_HASHES.get(rt)
    if cached is None:
        cached = await rt.off_loop(rt.password_hasher.hash, "not-a-real-password-for-timing")
        _DUMMY_HASHES[rt] = cached
    return cached


async def password_matches(rt: Runtime, row: UserRow | None, password: str) -> bool:
    """Constant work whether or not the account exists: an unknown account verifies a dummy hash."""
    encoded = row["password_hash"] if row else await _dummy_hash(rt)
    matched = await rt.off_loop(hash_matches, rt.password_hasher, encoded, password)
    return matched and row is not None


async def _fail(rt: Runtime, attempt: lockout.Attempt, code: str, user_id: int | None, client: Client, reason: str,
                counts: bool = True) -> AppError:
    """Record a refused sign-in; a counted failure keeps the attempt's lockout reservation, any other
    refusal gives it back."""
    if counts:
        locked = lockout.failed(attempt)
    else:
        locked = False
        await lockout.release(rt, attempt)
    async with rt.uow() as uow:
        await record_security(uow, "login.failure", user_id, client, {"reason": reason})
        if locked:
            await record_security(uow, "login.locked", user_id, client)
    return AppError(code)


async def second_factor_problem(
    rt: Runtime, uow: UnitOfWork, user: UserRow, codes: SecondFactor, client: Client
) -> str | None:
    """None when no second factor is needed or the given one is right, else the error code."""
    if not user["totp_enabled"]:
        return None
    if not (codes.totp_code or codes.backup_code):
        return "auth.2fa_required"
    if await verify_second_factor(rt, uow, user, codes, client):
        return None
    return "auth.invalid_code"


async def do_login(
    rt: Runtime, login_value: str, password: str, totp_code: str | None, backup_code: str | None, client: Client
) -> SignIn:
    # The account is looked up before the lockout is consulted: the count is per account, whichever of
    # its identifiers was typed (docs/architecture.md, sign-in lockout). Known and unknown values take
    # the same lookup, so neither its timing nor the lockout tells whether the account exists.
    async with rt.read() as uow:
        row = await find_by_login(rt, uow, login_value)
    subject = lockout.account(row["id"]) if row else lockout.unknown_login(norm(login_value.strip()))
    try:
        attempt = await lockout.reserve(rt, [subject], client.ip)
    except AppError:
        async with rt.uow() as uow:
            await record_security(uow, "login.locked", None, client)
        raise
    if row is not None and row["imported"]:
        # Its password hash can match nothing; the refusal says why instead of "invalid credentials".
        raise await _fail(rt, attempt, "user.imported", row["id"], client, "imported", counts=False)
    if not await password_matches(rt, row, password):
        raise await _fail(rt, attempt, "auth.invalid_credentials", row["id"] if row else None, client,
                          "invalid_credentials")
    assert row is not None
    if row["banned_at"] is not None:
        raise await _fail(rt, attempt, "user.banned", row["id"], client, "banned", counts=False)
    if row["is_instance_admin"] and not row["totp_enabled"]:
        await lockout.release(rt, attempt)
        email = user_private(row, rt.keys)["email"]
        raise AppError("auth.2fa_enrollment_required", hint=f"meadhall totp-setup --email {email}")
    # A backup code is checked against its slow hashes here, before the write transaction.
    codes = await check_second_factor(rt, row, totp_code, backup_code)
    async with rt.uow() as uow:
        problem = await second_factor_problem(rt, uow, row, codes, client)
        if problem is None:
            issued = await create_session(uow, row["id"], client, "password")
            await record_security(uow, "login.success", row["id"], client)
            fresh = await queries.select_user(uow.conn, row["id"])
            assert fresh is not None
            user = user_private(fresh, rt.keys)
    if problem == "auth.2fa_required":
        # Asking for the second factor is not a failure: it does not count towards the lockout.
        raise await _fail(rt, attempt, problem, row["id"], client, "2fa_required", counts=False)
    if problem is not None:
        raise await _fail(rt, attempt, problem, row["id"], client, "invalid_code")
    await lockout.succeeded(rt, attempt)
    return SignIn(user, issued)


# ---- step-up and password change ---------------------------------------------------------------


async def reserve_reverification(rt: Runtime, user: UserRow, client: Client) -> lockout.Attempt:
    """A re-verification of the signed-in user (step-up, the code of 2FA disable) counts towards the
    sign-in lockout of the account and the address: a stolen session must not become a password oracle
    outside the lockout. 429 while one of them is locked."""
    try:
        return await lockout.reserve(rt, [lockout.account(user["id"])], client.ip)
    except AppError:
        async with rt.uow() as uow:
            await record_security(uow, "step_up.failure", user["id"], client, {"reason": "locked"})
        raise


async def reverification_failed(uow: UnitOfWork, attempt: lockout.Attempt, user_id: int, client: Client) -> None:
    """Keep the failed re-verification counted; record the lock it caused."""
    if lockout.failed(attempt):
        await record_security(uow, "login.locked", user_id, client)


async def do_step_up(
    rt: Runtime, principal: Principal, password: str, totp_code: str | None, backup_code: str | None, client: Client
) -> dict[str, Any]:
    async with rt.read() as uow:
        row = await queries.select_user(uow.conn, principal.user_id)
    if row is None:
        raise AppError("auth.unauthorized")
    attempt = await reserve_reverification(rt, row, client)
    # The slow hashes (password, backup code) are checked outside the write transaction, which would
    # hold the SQLite write lock.
    ok = await password_matches(rt, row, password)
    codes = await check_second_factor(rt, row, totp_code, backup_code) if ok else SecondFactor(None, None)
    code: str | None = "auth.invalid_credentials"
    async with rt.uow() as uow:
        if ok:
            code = await second_factor_problem(rt, uow, row, codes, client)
        if code is None:
            until = uow.now + STEP_UP_WINDOW
            await session_queries.update_session(uow.conn, principal.session_id, {"step_up_expires_at": until})
            await record_security(uow, "step_up.success", principal.user_id, client)
    if code is None:
        await lockout.succeeded(rt, attempt)
        return {"step_up_expires_at": iso(until)}
    if code == "auth.2fa_required":
        await lockout.release(rt, attempt)
    async with rt.uow() as uow:
        await record_security(uow, "step_up.failure", principal.user_id, client, {"reason": code})
        if code != "auth.2fa_required":
            await reverification_failed(uow, attempt, principal.user_id, client)
    raise AppError(code)


def require_step_up(rt: Runtime, principal: Principal) -> None:
    if not principal.stepped_up(rt.clock.now()):
        raise AppError("auth.step_up_required")


async def do_change_password(rt: Runtime, principal: Principal, new_password: str, client: Client) -> None:
    check_password(new_password, rt.settings.LEAKED_PASSWORDS_FILE, field="new_password")
    require_step_up(rt, principal)
    password_hash = await hash_password(rt, new_password)
    async with rt.uow() as uow:
        await queries.update_user(
            uow.conn, principal.user_id, {"password_hash": password_hash, "password_reset_required": False}
        )
        await revoke_all(uow, principal.user_id, "password_changed", keep=principal.session_id)
        await record_security(uow, "password.change", principal.user_id, client)
