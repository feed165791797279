"""TOTP (RFC 6238: SHA-1, 6 digits, 30 s, +-1 step, each step accepted once) and one-time backup codes."""

from __future__ import annotations

import asyncio
import hmac
from dataclasses import dataclass

import pyotp

from meadhall.accounts import queries
from meadhall.accounts.passwords import hash_matches
from meadhall.accounts.queries import BackupCodeRow, UserRow
from meadhall.auth.security import Client, record_security
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


async def consume_totp(rt: Runtime, uow: UnitOfWork, user: UserRow, code: str) -> bool:
    blob = user["totp_secret_enc"]
    assert blob is not None, "callers check totp_enabled, which implies a stored secret"
    secret = open_secret(rt, user["id"], blob)
    step = matching_step(secret, code, uow.now.timestamp(), user["totp_last_step"])
    if step is None:
        return False
    # `user` may have been read before this transaction: only a step newer than the stored one is
    # claimed, so two concurrent requests cannot both use the same code.
    return await queries.update_totp_step(uow.conn, user["id"], step)


@dataclass(frozen=True)
class SecondFactor:
    """The codes of a request, with the unused backup code that the given one matched (found by
    `check_second_factor` before any write transaction: comparing up to 8 slow hashes inside one would
    hold SQLite's single write lock)."""

    totp_code: str | None
    backup_code: str | None
    backup_code_id: int | None = None


async def match_backup_code(rt: Runtime, user_id: int, code: str) -> int | None:
    """The id of the user's unused backup code that `code` is, or None; reads in its own transaction."""
    candidate = normalise_backup_code(code)
    if len(candidate) != 12:
        return None
    async with rt.read() as uow:
        rows = await queries.select_unused_backup_codes(uow.conn, user_id)
    for row in rows:
        if await rt.off_loop(hash_matches, rt.code_hasher, row["code_hash"], candidate):
            return int(row["id"])
    return None


async def check_second_factor(
    rt: Runtime, user: UserRow, totp_code: str | None, backup_code: str | None
) -> SecondFactor:
    """Do the slow part of a second-factor check; call it before opening the write transaction."""
    matched = None
    if user["totp_enabled"] and not totp_code and backup_code:
        matched = await match_backup_code(rt, user["id"], backup_code)
    return SecondFactor(totp_code, backup_code, matched)


async def consume_backup_code(uow: UnitOfWork, user: UserRow, codes: SecondFactor, client: Client) -> bool:
    # Conditional: of two requests presenting the same code at once, only one uses it.
    if codes.backup_code_id is None or not await queries.update_backup_code_used(
        uow.conn, user["id"], codes.backup_code_id, uow.now
    ):
        return False
    await record_security(uow, "2fa.backup_code_used", user["id"], client)
    return True


async def verify_second_factor(
    rt: Runtime, uow: UnitOfWork, user: UserRow, codes: SecondFactor, client: Client
) -> bool:
    """Consume the given code inside the write transaction (`codes` from `check_second_factor`)."""
    if codes.totp_code:
        return await consume_totp(rt, uow, user, codes.totp_code)
    if codes.backup_code:
        return await consume_backup_code(uow, user, codes, client)
    return False


async def new_backup_codes(rt: Runtime) -> tuple[list[str], list[str]]:
    """8 new backup codes and their slow hashes, hashed in parallel before any write transaction."""
    codes = [new_backup_code() for _ in range(BACKUP_CODE_COUNT)]
    hashes = await asyncio.gather(*(rt.off_loop(rt.code_hasher.hash, normalise_backup_code(c)) for c in codes))
    return codes, [str(h) for h in hashes]


async def store_backup_codes(uow: UnitOfWork, user_id: int, hashes: list[str]) -> None:
    """Replace the user's backup codes with the given hashes (from `new_backup_codes`)."""
    rows: list[BackupCodeRow] = [
        {"id": uow.next_id(), "user_id": user_id, "code_hash": h, "used_at": None} for h in hashes
    ]
    await queries.insert_backup_codes(uow.conn, user_id, rows)
