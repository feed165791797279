"""2FA management over HTTP: setup, enable, disable, backup-code regeneration (OpenAPI: setupTwoFactor,
enableTwoFactor, disableTwoFactor, regenerateBackupCodes)."""

from __future__ import annotations

import base64
import io
from datetime import timedelta
from typing import Any

from meadhall.accounts import lockout, queries
from meadhall.accounts.events import notify_user_update
from meadhall.accounts.secondfactor import (
    check_second_factor,
    matching_step,
    new_backup_codes,
    new_secret,
    open_secret,
    otpauth_url,
    seal_secret,
    store_backup_codes,
    verify_second_factor,
)
from meadhall.accounts.signin import require_step_up, reserve_reverification, reverification_failed
from meadhall.accounts.views import user_private
from meadhall.auth.security import Client, record_security
from meadhall.auth.sessions import Principal
from meadhall.core.clock import as_utc
from meadhall.core.errors import AppError, permission_denied
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime

PENDING_LIFE = timedelta(minutes=15)


def qr_data_uri(url: str) -> str:
    """A PNG QR code made locally (no network), as a data URI."""
    buffer = io.BytesIO()
    import segno  # with the first TOTP enrolment, not at start

    segno.make(url, error="m").save(buffer, kind="png", scale=5, border=2)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


async def do_setup_two_factor(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.uow() as uow:
        user = await queries.select_user(uow.conn, principal.user_id)
        assert user is not None
        if user["totp_enabled"]:
            raise AppError("auth.2fa_already_enabled")
        secret = new_secret()
        await queries.update_user(
            uow.conn,
            user["id"],
            {"totp_pending_enc": seal_secret(rt, user["id"], secret), "totp_pending_expires_at": uow.now + PENDING_LIFE},
        )
    url = otpauth_url(rt, secret, user["username"])
    return {"secret": secret, "otpauth_url": url, "qr_png": qr_data_uri(url)}


async def do_enable_two_factor(rt: Runtime, principal: Principal, code: str, client: Client) -> dict[str, Any]:
    # Hashed before the write transaction (slow hashes inside one hold SQLite's write lock); wasted
    # only when the code is wrong.
    codes, hashes = await new_backup_codes(rt)
    async with rt.uow() as uow:
        user = await queries.select_user(uow.conn, principal.user_id)
        assert user is not None
        if user["totp_enabled"]:
            raise AppError("auth.2fa_already_enabled")
        expires = as_utc(user["totp_pending_expires_at"])
        if user["totp_pending_enc"] is None or expires is None or expires <= uow.now:
            raise AppError("auth.2fa_setup_required")
        secret = open_secret(rt, user["id"], user["totp_pending_enc"])
        step = matching_step(secret, code, uow.now.timestamp(), None)
        if step is not None:
            # Conditional: of two enables racing with the same code, one wins and the other gets 409.
            enabled = await queries.update_totp_enabled(uow.conn, user["id"], {
                "totp_enabled": True,
                "totp_secret_enc": user["totp_pending_enc"],
                "totp_last_step": step,
                "totp_pending_enc": None,
                "totp_pending_expires_at": None,
            })
            if not enabled:
                raise AppError("auth.2fa_already_enabled")
            await store_backup_codes(uow, user["id"], hashes)
            await record_security(uow, "2fa.enable", user["id"], client)
            fresh = await queries.select_user(uow.conn, user["id"])
            assert fresh is not None
            uow.emit(notify_user_update(fresh, rt.keys))
    if step is None:
        raise AppError("auth.invalid_code")
    assert fresh is not None  # read in the transaction that used the step
    return {"user": user_private(fresh, rt.keys), "backup_codes": codes}


async def do_disable_two_factor(
    rt: Runtime, principal: Principal, totp_code: str | None, backup_code: str | None, client: Client
) -> dict[str, Any]:
    if principal.is_instance_admin:
        raise permission_denied(None, "Instance administrators must keep two-factor authentication")
    require_step_up(rt, principal)
    async with rt.read() as uow:
        user = await queries.select_user(uow.conn, principal.user_id)
    assert user is not None
    if not user["totp_enabled"]:
        raise AppError("auth.2fa_not_enabled")
    # The code re-verifies the user: it counts towards the sign-in lockout like a step-up, and a
    # backup code is compared with its slow hashes before the write transaction.
    attempt = await reserve_reverification(rt, user, client)
    codes = await check_second_factor(rt, user, totp_code, backup_code)
    async with rt.uow() as uow:
        user = await queries.select_user(uow.conn, principal.user_id)
        assert user is not None
        if not user["totp_enabled"]:
            await lockout.release(rt, attempt)
            raise AppError("auth.2fa_not_enabled")
        ok = await verify_second_factor(rt, uow, user, codes, client)
        if ok:
            await turn_off(uow, user["id"])
            await record_security(uow, "2fa.disable", user["id"], client)
            fresh = await queries.select_user(uow.conn, user["id"])
            assert fresh is not None
            uow.emit(notify_user_update(fresh, rt.keys))
    if not ok:
        async with rt.uow() as uow:
            await reverification_failed(uow, attempt, principal.user_id, client)
        raise AppError("auth.invalid_code")
    await lockout.succeeded(rt, attempt)
    assert fresh is not None  # read in the transaction that turned 2FA off
    return {"user": user_private(fresh, rt.keys)}


async def turn_off(uow: UnitOfWork, user_id: int) -> None:
    """Disable TOTP and delete the backup codes (user request, administrator reset, CLI)."""
    await queries.update_user(
        uow.conn,
        user_id,
        {"totp_enabled": False, "totp_secret_enc": None, "totp_last_step": None,
         "totp_pending_enc": None, "totp_pending_expires_at": None},
    )
    await queries.delete_backup_codes(uow.conn, user_id)


async def do_regenerate_backup_codes(rt: Runtime, principal: Principal, client: Client) -> dict[str, Any]:
    require_step_up(rt, principal)
    codes, hashes = await new_backup_codes(rt)
    async with rt.uow() as uow:
        user = await queries.select_user(uow.conn, principal.user_id)
        assert user is not None
        if not user["totp_enabled"]:
            raise AppError("auth.2fa_not_enabled")
        await store_backup_codes(uow, user["id"], hashes)
        await record_security(uow, "2fa.backup_codes_regenerate", user["id"], client)
    return {"backup_codes": codes}

