"""What an instance administrator does to one account (docs/admin.md, "Users"; OpenAPI: banInstanceUser,
unbanInstanceUser, revokeInstanceUserSession, resetInstanceUser2fa, setInstanceUserTemporaryPassword,
logoutInstanceUserEverywhere, grantInstanceAdmin, revokeInstanceAdmin).

Every action checks in one order (service.access_target): administrator, known account, step-up; then
its own rules. Each writes its audit entry in the transaction of the change, and its events leave after
the commit."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.accounts.admin_ops import do_grant_admin, do_reset_second_factor
from meadhall.accounts.events import notify_user_update
from meadhall.accounts.imported import refuse_imported
from meadhall.accounts.queries import UserRow
from meadhall.accounts.signin import hash_password, require_step_up
from meadhall.admin.access import require_admin
from meadhall.admin.users import queries
from meadhall.admin.users.removal import remove_from_voice_and_calls
from meadhall.admin.users.service import access_target, load_target
from meadhall.admin.views import admin_user_of
from meadhall.audit.record import record
from meadhall.auth import queries as auth_queries
from meadhall.auth.events import notify_session_invalidated
from meadhall.auth.security import Client, record_security
from meadhall.auth.sessions import Principal, revoke_all
from meadhall.core.crypto import random_password
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import parse_id
from meadhall.db import dialect
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime

# The transaction lock under which the number of administrators is read and lowered (db/dialect/): two
# administrators removing each other at once must not leave none.
ADMIN_COUNT_LOCK = 0x61646D6E  # "admn"


def _not_another_admin(principal: Principal, target: UserRow, what: str) -> None:
    """An administrator's account is theirs to keep: another administrator may not do `what` to it."""
    if target["is_instance_admin"] and target["id"] != principal.user_id:
        raise permission_denied(None, f"Another instance administrator's {what} cannot be changed")


async def _answer(rt: Runtime, uow: UnitOfWork, user_id: int) -> dict[str, Any]:
    view = await admin_user_of(uow.conn, user_id, rt.keys, uow.now)
    assert view is not None  # read in the transaction that found it
    return {"user": view}


async def _user_updated(rt: Runtime, uow: UnitOfWork, user_id: int) -> None:
    fresh = await account_queries.select_user(uow.conn, user_id)
    assert fresh is not None
    uow.emit(notify_user_update(fresh, rt.keys))


async def do_ban_account(rt: Runtime, principal: Principal, raw_user_id: str, reason: str) -> dict[str, Any]:
    """Instance ban: every session deleted (SESSION_INVALIDATED `banned`, then close 4010), then the account
    leaves its voice room and calls. Neither oneself nor an administrator can be banned."""
    async with rt.uow() as uow:
        target = await access_target(rt, uow, principal, raw_user_id)
        if target["id"] == principal.user_id:
            raise permission_denied(None, "You cannot ban yourself")
        if target["is_instance_admin"]:
            raise permission_denied(None, "An instance administrator cannot be banned")
        values = {"banned_at": uow.now, "ban_reason": reason, "banned_by": principal.user_id}
        if not await queries.update_ban(uow.conn, target["id"], values, banned=False):
            raise AppError("user.already_banned")
        await revoke_all(uow, target["id"], "banned")
        await record(uow, "instance.user_ban", actor_id=principal.user_id, target_type="user",
                     target_id=target["id"], reason=reason)
        answer = await _answer(rt, uow, target["id"])
    await remove_from_voice_and_calls(rt, target["id"])
    return answer


async def do_unban_user(rt: Runtime, principal: Principal, raw_user_id: str) -> dict[str, Any]:
    async with rt.uow() as uow:
        target = await access_target(rt, uow, principal, raw_user_id)
        values = {"banned_at": None, "ban_reason": None, "banned_by": None}
        if not await queries.update_ban(uow.conn, target["id"], values, banned=True):
            raise AppError("user.not_banned")
        await record(uow, "instance.user_unban", actor_id=principal.user_id, target_type="user",
                     target_id=target["id"])
        return await _answer(rt, uow, target["id"])


async def do_revoke_user_session(rt: Runtime, principal: Principal, raw_user_id: str, raw_session_id: str,
                                 client: Client) -> None:
    """One device signed out: SESSION_INVALIDATED (`admin_action`) to that session's connections only. The
session is looked up like the account, before the step-up."""
    require_admin(principal)
    async with rt.uow() as uow:
        target = await load_target(uow, raw_user_id)
        session_id = parse_id(raw_session_id)
        row = None if session_id is None else await auth_queries.select_session(uow.conn, target["id"], session_id)
        if row is None:
            raise AppError("session.not_found")
        require_step_up(rt, principal)
        await auth_queries.delete_session(uow.conn, row["id"])
        await record_security(uow, "session.revoke", target["id"], client,
                              {"session_id": str(row["id"]), "by": "admin"})
        await record(uow, "instance.user_session_revoke", actor_id=principal.user_id, target_type="session",
                     target_id=row["id"], data={"user_id": str(target["id"])})
        uow.emit(*notify_session_invalidated(target["id"], [row["id"]], "admin_action"))


async def do_reset_user_2fa(rt: Runtime, principal: Principal, raw_user_id: str, client: Client) -> dict[str, Any]:
    """TOTP and backup codes removed (an administrator resetting their own also loses every session, as with
    `meadhall totp-reset`); USER_UPDATE to the account."""
    async with rt.uow() as uow:
        target = await access_target(rt, uow, principal, raw_user_id)
        refuse_imported(target)
        _not_another_admin(principal, target, "second factor")
        if not target["totp_enabled"]:
            raise AppError("auth.2fa_not_enabled")
        await do_reset_second_factor(uow, target)
        await record_security(uow, "2fa.reset", target["id"], client, {"by": "admin"})
        await record(uow, "instance.user_reset_2fa", actor_id=principal.user_id, target_type="user",
                     target_id=target["id"])
        await _user_updated(rt, uow, target["id"])
        return await _answer(rt, uow, target["id"])


async def do_set_temporary_password(rt: Runtime, principal: Principal, raw_user_id: str, client: Client
                                    ) -> dict[str, Any]:
    """A random 20-character password, shown once; every session is deleted (`admin_action`) and the account
    is asked to change it (`password_reset_required`, advisory)."""
    async with rt.read() as uow:
        target = await access_target(rt, uow, principal, raw_user_id)
        refuse_imported(target)  # a password would let someone sign in as the author
        _not_another_admin(principal, target, "password")
    password = random_password()
    # Hashed outside the write transaction: a slow hash inside one would hold the SQLite write lock.
    password_hash = await hash_password(rt, password)
    async with rt.uow() as uow:
        target = await access_target(rt, uow, principal, raw_user_id)
        refuse_imported(target)  # a password would let someone sign in as the author
        _not_another_admin(principal, target, "password")
        await account_queries.update_user(uow.conn, target["id"],
                                          {"password_hash": password_hash, "password_reset_required": True})
        await revoke_all(uow, target["id"], "admin_action")
        await record_security(uow, "password.reset", target["id"], client, {"by": "admin"})
        await record(uow, "instance.user_temp_password", actor_id=principal.user_id, target_type="user",
                     target_id=target["id"])
    return {"password": password}


async def do_logout_user_everywhere(rt: Runtime, principal: Principal, raw_user_id: str, client: Client) -> None:
    async with rt.uow() as uow:
        target = await access_target(rt, uow, principal, raw_user_id)
        await revoke_all(uow, target["id"], "admin_action")
        await record_security(uow, "logout_all", target["id"], client, {"by": "admin"})
        await record(uow, "instance.user_logout_all", actor_id=principal.user_id, target_type="user",
                     target_id=target["id"])


async def do_grant_instance_admin(rt: Runtime, principal: Principal, raw_user_id: str) -> dict[str, Any]:
    """Administration granted (already an administrator: nothing changes). Every session of the account is
    deleted: the next sign-in must pass the administrators' rules (second factor)."""
    async with rt.uow() as uow:
        target = await access_target(rt, uow, principal, raw_user_id)
        refuse_imported(target)
        if not target["is_instance_admin"]:
            await do_grant_admin(uow, target["id"], principal.user_id)
            await _user_updated(rt, uow, target["id"])
        return await _answer(rt, uow, target["id"])


async def do_revoke_instance_admin(rt: Runtime, principal: Principal, raw_user_id: str) -> dict[str, Any]:
    """Administration removed (not an administrator: nothing changes), never from the last one; no session
    is deleted."""
    async with rt.uow() as uow:
        target = await access_target(rt, uow, principal, raw_user_id)
        if target["is_instance_admin"]:
            await dialect.transaction_lock(uow.conn, ADMIN_COUNT_LOCK)
            if await account_queries.select_admin_count(uow.conn) <= 1:
                raise AppError("instance.last_admin")
            await account_queries.update_user(uow.conn, target["id"], {"is_instance_admin": False})
            await record(uow, "instance.admin_revoke", actor_id=principal.user_id, target_type="user",
                         target_id=target["id"])
            await _user_updated(rt, uow, target["id"])
        return await _answer(rt, uow, target["id"])
