"""TOTP (RFC 6238: SHA-1, 6 digits, 30 s, +-1 step, each step accepted once) and one-time backup codes."""

from __future__ import annotations

import hmac
from typing import Any

import pyotp
from sqlalchemy import RowMapping

from meadhall.accounts import queries
from meadhall.accounts.passwords import hash_matches
from meadhall.accounts.security import Client, record_security
from meadhall.core.crypto import decrypt, encrypt, new_backup_code, normalise_backup_code
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime

STEP = 30
BACKUP_CODE_COUNT = 8


def new_secret() -> str:
    return pyotp.random_base32()


def otpauth_url(rt: Runtime, secret: str, username: str) -> str:
    return pyotp.TOTP(secret).provisioning_uri(name=username, issuer_name=rt.settings.DOMAIN)


def seal_secret(rt: Runtime, user_id: int, secret: str) -> bytes:
    return encrypt(rt.keys.totp_enc, secret, aad=str(user_id).encode())


def open_secret(rt: Runtime, user_id: int, blob: bytes) -> str:
    return decrypt(rt.keys.totp_enc, blob, aad=str(user_id).encode())


def matching_step(secret: str, code: str, now_ts: float, last_step: int | None) -> int | None:
    """The time step (+-1 around now) whose code this is, unless that step was already used."""
    code = code.strip().replace(" ", "")
    if not (code.isdigit() and len(code) == 6):
        return None
    totp = pyotp.TOTP(secret)
    current = int(now_ts // STEP)
    for step in (current - 1, current, current + 1):
        if hmac.compare_digest(totp.generate_otp(step), code):
            return step if last_step is None or step > last_step else None
    return None


async def consume_totp(rt: Runtime, uow: UnitOfWork, user: RowMapping, code: str) -> bool:
    secret = open_secret(rt, user["id"], user["totp_secret_enc"])
    step = matching_step(secret, code, uow.now.timestamp(), user["totp_last_step"])
    if step is None:
        return False
    # `user` may have been read before this transaction: only a step newer than the stored one is
    # claimed, so two concurrent requests cannot both use the same code.
    return await queries.claim_totp_step(uow.conn, user["id"], step)


async def consume_backup_code(rt: Runtime, uow: UnitOfWork, user: RowMapping, code: str, client: Client) -> bool:
    candidate = normalise_backup_code(code)
    if len(candidate) != 12:
        return False
    for row in await queries.unused_backup_codes(uow.conn, user["id"]):
        if not await rt.off_loop(hash_matches, rt.code_hasher, row["code_hash"], candidate):
            continue
        if await queries.mark_backup_code_used(uow.conn, user["id"], row["id"], uow.now):
            await record_security(uow, "2fa.backup_code_used", user["id"], client)
            return True
        return False
    return False


async def verify_second_factor(
    rt: Runtime, uow: UnitOfWork, user: RowMapping, totp_code: str | None, backup_code: str | None, client: Client
) -> bool:
    if totp_code:
        return await consume_totp(rt, uow, user, totp_code)
    if backup_code:
        return await consume_backup_code(rt, uow, user, backup_code, client)
    return False


async def issue_backup_codes(rt: Runtime, uow: UnitOfWork, user_id: int) -> list[str]:
    """Replace the user's backup codes with 8 new ones; only their slow hashes are stored."""
    codes = [new_backup_code() for _ in range(BACKUP_CODE_COUNT)]
    rows: list[dict[str, Any]] = [
        {"id": uow.next_id(), "user_id": user_id,
         "code_hash": await rt.off_loop(rt.code_hasher.hash, normalise_backup_code(c)), "used_at": None}
        for c in codes
    ]
    await queries.replace_backup_codes(uow.conn, user_id, rows)
    return codes
