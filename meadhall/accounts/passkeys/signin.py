"""Sign-in and step-up with a passkey (OpenAPI: passkeyLoginOptions, passkeyLoginVerify, stepUp;
docs/passkeys.md).

The sign-in is always discoverable: the options never list credentials (`allowCredentials` is empty), the
browser offers the site's resident keys and the presented credential (with its user handle) finds the
account. With an email the ceremony remembers that account and verify accepts only its keys; known and
unknown emails answer alike. Failures count towards the address lockout only (a passkey names no login
value to lock). A passkey sign-in asks for no TOTP code and passes the administrators' second-factor
rule, so an administrator's assertion must carry user verification (a found key without its PIN is not
enough): 401 `auth.passkey_uv_required` otherwise, at sign-in and at step-up. An administrator who has
not enrolled TOTP is refused as at password sign-in."""

from __future__ import annotations

import secrets
from typing import Any

from meadhall.accounts import lockout
from meadhall.accounts import queries as account_queries
from meadhall.accounts.passkeys import ceremonies, queries
from meadhall.accounts.passkeys import relying_party as rp
from meadhall.accounts.passkeys.queries import PasskeyRow
from meadhall.accounts.queries import UserRow
from meadhall.accounts.signin import SignIn, email_lookup
from meadhall.accounts.views import user_private
from meadhall.auth import queries as session_queries
from meadhall.auth.security import Client, record_security
from meadhall.auth.sessions import STEP_UP_WINDOW, Principal, create_session
from meadhall.core.clock import iso
from meadhall.core.errors import AppError
from meadhall.runtime import Runtime

# A ceremony restricted to an email that names no account: no passkey belongs to it.
NOBODY = 0


async def do_login_options(rt: Runtime, email: str | None) -> dict[str, Any]:
    rp.check_enabled(rt)
    restricted_to: int | None = None
    if email is not None:
        restricted_to = NOBODY
        async with rt.read() as uow:
            user = await account_queries.select_user_by_email(uow.conn, email_lookup(rt, email))
            if user is not None and user["deleted_at"] is None:
                restricted_to = user["id"]
    challenge = secrets.token_bytes(32)
    options = rp.authentication_options(rt, challenge)
    ceremony_id = await ceremonies.start(rt, {"kind": "login", "challenge": rp.b64(challenge), "user_id": restricted_to})
    return {"ceremony_id": ceremony_id, "options": options}


async def _presented_passkey(rt: Runtime, credential: dict[str, Any]) -> PasskeyRow:
    """The stored passkey this answer names; 401 `auth.passkey_failed` for an unknown credential."""
    credential_id, _ = rp.presented(credential)
    async with rt.read() as uow:
        row = await queries.select_passkey_by_credential(uow.conn, credential_id)
    if row is None:
        raise AppError("auth.passkey_failed")
    return row


def _verified(rt: Runtime, ceremony: dict[str, Any], credential: dict[str, Any], row: PasskeyRow,
              owner: int | None) -> rp.Assertion:
    """The checked assertion; 401 `auth.passkey_failed` for a key outside the ceremony's account (or
    `owner`), a user handle that is not the key's, or a failed WebAuthn check."""
    for required in (ceremony.get("user_id"), owner):
        if required is not None and row["user_id"] != required:
            raise AppError("auth.passkey_failed")
    _, handle = rp.presented(credential)
    if handle is not None and handle != row["user_handle"]:
        raise AppError("auth.passkey_failed")
    return rp.verify_authentication(rt, credential, ceremony["challenge"], row["public_key"], row["sign_count"])


def _check_user_verified(user: UserRow, assertion: rp.Assertion) -> None:
    """An administrator's passkey stands in for the password and the second factor: without user
    verification a found security key alone would carry full instance power (docs/passkeys.md)."""
    if user["is_instance_admin"] and not assertion.user_verified:
        raise AppError("auth.passkey_uv_required")


async def _record_use(rt: Runtime, uow: Any, row: PasskeyRow, assertion: rp.Assertion) -> None:
    if not await queries.update_passkey_use(uow.conn, row["id"], row["sign_count"], assertion.sign_count,
                                            {"last_used_at": uow.now, "backed_up": assertion.backed_up}):
        # Another use of this key moved its counter meanwhile: the same counter twice is a replay.
        raise AppError("auth.passkey_failed")


async def _login_failed(rt: Runtime, attempt: lockout.Attempt, user_id: int | None, client: Client,
                        code: str) -> None:
    locked = lockout.failed(attempt)
    reason = "passkey_uv_required" if code == "auth.passkey_uv_required" else "passkey_failed"
    async with rt.uow() as uow:
        await record_security(uow, "login.failure", user_id, client, {"reason": reason})
        if locked:
            await record_security(uow, "login.locked", user_id, client)


async def do_login_verify(rt: Runtime, ceremony_id: str, credential: dict[str, Any], client: Client) -> SignIn:
    rp.check_enabled(rt)
    try:
        attempt = await lockout.reserve(rt, [], client.ip)
    except AppError:
        async with rt.uow() as uow:
            await record_security(uow, "login.locked", None, client)
        raise
    row: PasskeyRow | None = None
    try:
        ceremony = await ceremonies.take(rt, ceremony_id, "login")
        row = await _presented_passkey(rt, credential)
        assertion = _verified(rt, ceremony, credential, row, None)
        async with rt.read() as uow:
            user = await account_queries.select_user(uow.conn, row["user_id"])
        if user is None or user["deleted_at"] is not None:
            raise AppError("auth.passkey_failed")
        _check_user_verified(user, assertion)
    except AppError as exc:
        await _login_failed(rt, attempt, row["user_id"] if row else None, client, exc.code)
        raise
    if user["imported"]:
        await lockout.release(rt, attempt)
        async with rt.uow() as uow:
            await record_security(uow, "login.failure", user["id"], client, {"reason": "imported"})
        raise AppError("user.imported")
    if user["banned_at"] is not None:
        await lockout.release(rt, attempt)
        async with rt.uow() as uow:
            await record_security(uow, "login.failure", user["id"], client, {"reason": "banned"})
        raise AppError("user.banned")
    if user["is_instance_admin"] and not user["totp_enabled"]:
        await lockout.release(rt, attempt)
        email = user_private(user, rt.keys)["email"]
        raise AppError("auth.2fa_enrollment_required", hint=f"meadhall totp-setup --email {email}")
    try:
        async with rt.uow() as uow:
            await _record_use(rt, uow, row, assertion)
            issued = await create_session(uow, user["id"], client, "passkey")
            await record_security(uow, "passkey.login", user["id"], client, {"passkey_id": str(row["id"])})
            fresh = await account_queries.select_user(uow.conn, user["id"])
            assert fresh is not None
            private = user_private(fresh, rt.keys)
    except AppError as exc:
        await _login_failed(rt, attempt, user["id"], client, exc.code)
        raise
    await lockout.succeeded(rt, attempt)
    return SignIn(private, issued)


async def do_step_up_by_passkey(rt: Runtime, principal: Principal, ceremony_id: str, credential: dict[str, Any],
                                client: Client) -> dict[str, Any]:
    """Re-verify with one of the caller's own passkeys, from a sign-in ceremony (OpenAPI: stepUp)."""
    rp.check_enabled(rt)
    try:
        attempt = await lockout.reserve(rt, [], client.ip)
    except AppError:
        async with rt.uow() as uow:
            await record_security(uow, "step_up.failure", principal.user_id, client, {"reason": "locked"})
        raise
    try:
        ceremony = await ceremonies.take(rt, ceremony_id, "login")
        row = await _presented_passkey(rt, credential)
        assertion = _verified(rt, ceremony, credential, row, principal.user_id)
        async with rt.uow() as uow:
            user = await account_queries.select_user(uow.conn, principal.user_id)
            if user is None:
                raise AppError("auth.unauthorized")
            _check_user_verified(user, assertion)
            await _record_use(rt, uow, row, assertion)
            until = uow.now + STEP_UP_WINDOW
            await session_queries.update_session(uow.conn, principal.session_id, {"step_up_expires_at": until})
            await record_security(uow, "step_up.success", principal.user_id, client,
                                  {"passkey_id": str(row["id"])})
    except AppError as exc:
        locked = lockout.failed(attempt)
        async with rt.uow() as uow:
            await record_security(uow, "step_up.failure", principal.user_id, client, {"reason": exc.code})
            if locked:
                await record_security(uow, "login.locked", principal.user_id, client)
        raise
    await lockout.succeeded(rt, attempt)
    return {"step_up_expires_at": iso(until)}
