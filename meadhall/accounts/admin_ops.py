"""Account maintenance run by the command-line tool as the system actor (docs/operations.md)."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meadhall.accounts import queries
from meadhall.accounts.events import notify_user_update
from meadhall.accounts.imported import refuse_imported
from meadhall.accounts.passwords import check_password
from meadhall.accounts.queries import UserRow
from meadhall.accounts.secondfactor import (
    new_backup_codes,
    new_secret,
    otpauth_url,
    seal_secret,
    store_backup_codes,
)
from meadhall.accounts.signin import NewAccount, do_create_user, email_lookup, hash_password
from meadhall.accounts.twofactor import turn_off
from meadhall.accounts.validation import check_email, check_username
from meadhall.audit.record import record
from meadhall.auth.security import CLI_CLIENT, record_security
from meadhall.auth.sessions import create_session, revoke_all
from meadhall.core.crypto import random_password
from meadhall.core.errors import AppError, validation_error
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime


@dataclass(frozen=True)
class UserSpec:
    username: str
    email: str
    password: str | None  # None = generate


def bulk_email_domain(domain: str) -> str:
    """`DOMAIN`, unless it is an IP address or has no dot (then the reserved `example.invalid`)."""
    try:
        ipaddress.ip_address(domain.strip("[]"))
    except ValueError:
        return domain if "." in domain else "example.invalid"
    return "example.invalid"


def bulk_specs(rt: Runtime, count: int, prefix: str) -> list[UserSpec]:
    if not 1 <= count <= 100_000:
        raise validation_error("count", "must be 1-100000")
    domain = bulk_email_domain(rt.settings.DOMAIN)
    return [UserSpec(f"{prefix}{i}", f"{prefix}{i}@{domain}", None) for i in range(1, count + 1)]


def _validated(spec: UserSpec, rt: Runtime) -> UserSpec:
    try:
        username = check_username(spec.username)
    except ValueError as exc:
        raise validation_error("username", str(exc)) from None
    try:
        email = check_email(spec.email)
    except ValueError as exc:
        raise validation_error("email", str(exc)) from None
    if spec.password is not None:
        check_password(spec.password, rt.settings.LEAKED_PASSWORDS_FILE)
    return UserSpec(username, email, spec.password)


def _open_new_file(path: Path) -> int:
    """A new file readable by the owner only; an existing file is never overwritten."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise validation_error("sessions", f"{path} exists; choose a new file") from None


async def hash_passwords(rt: Runtime, passwords: list[str], progress: Callable[[], None] | None = None) -> list[str]:
    """Hash on every worker of the hashing pool at once (argon2 releases the GIL); `progress` is called
    once per finished hash."""

    async def one(password: str) -> str:
        hashed = await hash_password(rt, password)
        if progress is not None:
            progress()
        return hashed

    return list(await asyncio.gather(*(one(p) for p in passwords)))


async def create_users(
    rt: Runtime, specs: list[UserSpec], *, admin: bool = False, sessions_path: Path | None = None,
    progress: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """All or nothing: any existing username or email aborts with no user created. The passwords are
    hashed before the write transaction opens; `progress` is called after each hash."""
    specs = [_validated(s, rt) for s in specs]
    fd = _open_new_file(sessions_path) if sessions_path else None
    created: list[dict[str, Any]] = []
    passwords = [spec.password or random_password() for spec in specs]
    try:
        hashes = await hash_passwords(rt, passwords, progress)
        async with rt.uow() as uow:
            for spec, password, password_hash in zip(specs, passwords, hashes, strict=True):
                new = NewAccount(spec.username, spec.email, password, is_instance_admin=admin)
                row = await do_create_user(rt, uow, new, password_hash)
                item = {"id": str(row["id"]), "username": row["username"], "email": spec.email,
                        "password": password}
                if admin:
                    await record(uow, "instance.admin_grant", actor_id=None, target_type="user", target_id=row["id"])
                if fd is not None:
                    item["token"] = (await create_session(uow, row["id"], CLI_CLIENT, "cli")).token
                created.append(item)
    except BaseException:
        if fd is not None and sessions_path is not None:  # the file is opened only with a path
            os.close(fd)
            os.unlink(sessions_path)
        raise
    if fd is None:
        return {"users": created, "sessions_file": None}
    with os.fdopen(fd, "w") as fh:
        for item in created:
            fh.write(json.dumps(item) + "\n")
    public = [{k: v for k, v in item.items() if k not in ("password", "token")} for item in created]
    return {"users": public, "sessions_file": str(sessions_path)}


async def _by_email(rt: Runtime, uow: UnitOfWork, email: str) -> UserRow:
    row = await queries.select_user_by_email(uow.conn, email_lookup(rt, email.strip()))
    if row is None or row["deleted_at"] is not None:
        raise AppError("user.not_found", f"No account with email {email}")
    refuse_imported(row)  # no address leads to one today; a password, 2FA or administration must never reach one
    return row


async def reset_password(rt: Runtime, email: str, password: str | None) -> dict[str, Any]:
    if password is not None:
        check_password(password, rt.settings.LEAKED_PASSWORDS_FILE)
    new_password = password or random_password()
    password_hash = await hash_password(rt, new_password)
    async with rt.uow() as uow:
        user = await _by_email(rt, uow, email)
        await queries.update_user(uow.conn, user["id"], {"password_hash": password_hash})
        await revoke_all(uow, user["id"], "password_changed")
        await record_security(uow, "password.reset", user["id"], CLI_CLIENT)
    result: dict[str, Any] = {"user_id": str(user["id"])}
    if password is None:
        result["password"] = new_password
    return result


async def _user_updated(rt: Runtime, uow: UnitOfWork, user_id: int) -> None:
    """USER_UPDATE for admin grant/removal and 2FA on/reset (docs/reference/events.md). From the CLI the event
    goes through the outbox that serving processes drain (docs/architecture.md), so it reaches live connections
    on one node without Redis as on several."""
    fresh = await queries.select_user(uow.conn, user_id)
    assert fresh is not None
    uow.emit(notify_user_update(fresh, rt.keys))


async def do_grant_admin(uow: UnitOfWork, user_id: int, actor_id: int | None) -> list[int]:
    """Make the user an instance administrator and delete every session they hold (docs/operations.md): a
    session opened without the administrator's second factor must never carry administrator power.
    Their connections get SESSION_INVALIDATED (`admin_action`), then close 4010. Sessions issued after
    this (a sign-in passing the administrator rules, `create-user --sessions`) are unaffected. The CLI
    and `PUT /instance/users/{id}/admin` both grant through here. Returns the deleted session ids."""
    await queries.update_user(uow.conn, user_id, {"is_instance_admin": True})
    await record(uow, "instance.admin_grant", actor_id=actor_id, target_type="user", target_id=user_id)
    return await revoke_all(uow, user_id, "admin_action")


async def make_admin(rt: Runtime, email: str) -> dict[str, Any]:
    async with rt.uow() as uow:
        user = await _by_email(rt, uow, email)
        if not user["is_instance_admin"]:
            await do_grant_admin(uow, user["id"], None)
            await _user_updated(rt, uow, user["id"])
    return {"user_id": str(user["id"]), "is_instance_admin": True, "totp_enabled": bool(user["totp_enabled"])}


async def remove_admin(rt: Runtime, email: str) -> dict[str, Any]:
    async with rt.uow() as uow:
        user = await _by_email(rt, uow, email)
        if user["is_instance_admin"]:
            if await queries.select_admin_count(uow.conn) <= 1:
                raise AppError("instance.last_admin")
            await queries.update_user(uow.conn, user["id"], {"is_instance_admin": False})
            await record(uow, "instance.admin_revoke", actor_id=None, target_type="user", target_id=user["id"])
            await _user_updated(rt, uow, user["id"])
    return {"user_id": str(user["id"]), "is_instance_admin": False}


async def totp_setup(rt: Runtime, email: str, force: bool) -> dict[str, Any]:
    secret = new_secret()
    codes, hashes = await new_backup_codes(rt)
    async with rt.uow() as uow:
        user = await _by_email(rt, uow, email)
        if user["totp_enabled"] and not force:
            raise AppError("auth.2fa_already_enabled", "Two-factor authentication is already enabled; use --force")
        await queries.update_user(
            uow.conn,
            user["id"],
            {"totp_enabled": True, "totp_secret_enc": seal_secret(rt, user["id"], secret), "totp_last_step": None,
             "totp_pending_enc": None, "totp_pending_expires_at": None},
        )
        await store_backup_codes(uow, user["id"], hashes)
        await record_security(uow, "2fa.enable", user["id"], CLI_CLIENT, {"by": "cli"})
        await _user_updated(rt, uow, user["id"])
    return {"user_id": str(user["id"]), "secret": secret, "otpauth_url": otpauth_url(rt, secret, user["username"]),
            "backup_codes": codes}


async def do_reset_second_factor(uow: UnitOfWork, user: UserRow) -> list[int]:
    """Turn 2FA off (TOTP and backup codes); for an instance administrator also delete every session
    (docs/operations.md `totp-reset`), since those were opened with the factor now gone. Returns the
    deleted session ids."""
    await turn_off(uow, user["id"])
    if user["is_instance_admin"]:
        return await revoke_all(uow, user["id"], "admin_action")
    return []


async def totp_reset(rt: Runtime, email: str) -> dict[str, Any]:
    async with rt.uow() as uow:
        user = await _by_email(rt, uow, email)
        if not user["totp_enabled"]:
            raise AppError("auth.2fa_not_enabled")
        await do_reset_second_factor(uow, user)
        await record_security(uow, "2fa.reset", user["id"], CLI_CLIENT, {"by": "cli"})
        await _user_updated(rt, uow, user["id"])
    return {"user_id": str(user["id"]), "totp_enabled": False}
