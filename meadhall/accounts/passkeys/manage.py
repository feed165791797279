"""Passkey registration and management (OpenAPI: passkeyRegisterOptions, passkeyRegisterVerify,
listPasskeys, renamePasskey, revokePasskey; docs/passkeys.md). Registration, rename and revoke need a
step-up; list, rename and revoke keep working when passkeys are off (DOMAIN an IP address)."""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy.exc import IntegrityError

from meadhall.accounts import queries as account_queries
from meadhall.accounts.passkeys import ceremonies, queries
from meadhall.accounts.passkeys import relying_party as rp
from meadhall.accounts.passkeys.queries import PasskeyRow
from meadhall.accounts.passkeys.views import passkey_view
from meadhall.accounts.signin import require_step_up
from meadhall.auth.security import Client, record_security
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.runtime import Runtime

PASSKEYS_PER_ACCOUNT = 10
DEFAULT_NAME = "Passkey"


async def do_registration_options(rt: Runtime, principal: Principal) -> dict[str, Any]:
    rp.check_enabled(rt)
    require_step_up(rt, principal)
    async with rt.read() as uow:
        user = await account_queries.select_user(uow.conn, principal.user_id)
        assert user is not None
        existing = await queries.select_user_passkeys(uow.conn, principal.user_id)
    if len(existing) >= PASSKEYS_PER_ACCOUNT:
        raise AppError("passkey.limit_reached")
    handle = existing[0]["user_handle"] if existing else rp.b64(secrets.token_bytes(32))
    challenge = secrets.token_bytes(32)
    options = rp.registration_options(rt, challenge, rp.unb64(handle), user["username"], user["display_name"],
                                      existing)
    ceremony_id = await ceremonies.start(rt, {
        "kind": "register", "user_id": principal.user_id, "challenge": rp.b64(challenge), "handle": handle,
    })
    return {"ceremony_id": ceremony_id, "options": options}


def _transports(credential: dict[str, Any]) -> list[str]:
    """The transports the browser reported (hints for later `allowCredentials`), kept only when well formed."""
    response = credential.get("response")
    listed = response.get("transports") if isinstance(response, dict) else None
    if not isinstance(listed, list):
        return []
    return [t for t in listed if isinstance(t, str) and len(t) <= 32][:8]


async def do_register_passkey(rt: Runtime, principal: Principal, ceremony_id: str, credential: dict[str, Any],
                              name: str | None, client: Client) -> dict[str, Any]:
    rp.check_enabled(rt)
    # Taken first: every verify attempt, accepted or refused, uses the ceremony up.
    ceremony = await ceremonies.take(rt, ceremony_id, "register")
    if ceremony["user_id"] != principal.user_id:
        raise AppError("auth.ceremony_invalid")
    require_step_up(rt, principal)
    verified = rp.verify_registration(rt, credential, ceremony["challenge"])
    credential_id = rp.b64(verified.credential_id)
    transports = _transports(credential)
    async with rt.uow() as uow:
        if await queries.select_passkey_by_credential(uow.conn, credential_id) is not None:
            raise AppError("passkey.already_registered")
        if await queries.count_user_passkeys(uow.conn, principal.user_id) >= PASSKEYS_PER_ACCOUNT:
            raise AppError("passkey.limit_reached")
        # A passkey registered meanwhile (another ceremony) may have set the account's handle.
        handle = await queries.select_user_handle(uow.conn, principal.user_id) or ceremony["handle"]
        row: PasskeyRow = {
            "id": uow.next_id(),
            "user_id": principal.user_id,
            "credential_id": credential_id,
            "public_key": verified.credential_public_key,
            "sign_count": verified.sign_count,
            "transports": transports,
            "backed_up": verified.credential_backed_up,
            "name": name or DEFAULT_NAME,
            "user_handle": handle,
            "created_at": uow.now,
            "last_used_at": None,
        }
        try:
            # Two verifications of one credential at once: the unique index decides.
            async with uow.conn.begin_nested():
                await queries.insert_passkey(uow.conn, row)
        except IntegrityError:
            raise AppError("passkey.already_registered") from None
        await record_security(uow, "passkey.register", principal.user_id, client, {"passkey_id": str(row["id"])})
    return {"passkey": passkey_view(row)}


async def access_own_passkeys(rt: Runtime, principal: Principal) -> list[dict[str, Any]]:
    async with rt.read() as uow:
        rows = await queries.select_user_passkeys(uow.conn, principal.user_id)
    return [passkey_view(r) for r in rows]


async def _access_passkey(rt: Runtime, principal: Principal, passkey_id: int | None) -> int:
    """The id of one of the caller's passkeys; another account's answers like a missing one."""
    if passkey_id is None:
        raise AppError("passkey.not_found")
    async with rt.read() as uow:
        if await queries.select_passkey(uow.conn, principal.user_id, passkey_id) is None:
            raise AppError("passkey.not_found")
    return passkey_id


async def do_rename_passkey(rt: Runtime, principal: Principal, passkey_id: int | None, name: str, client: Client
                            ) -> dict[str, Any]:
    passkey_id = await _access_passkey(rt, principal, passkey_id)
    require_step_up(rt, principal)
    async with rt.uow() as uow:
        if not await queries.update_passkey(uow.conn, principal.user_id, passkey_id, {"name": name}):
            raise AppError("passkey.not_found")
        row = await queries.select_passkey(uow.conn, principal.user_id, passkey_id)
        assert row is not None
        await record_security(uow, "passkey.rename", principal.user_id, client, {"passkey_id": str(passkey_id)})
    return {"passkey": passkey_view(row)}


async def do_revoke_passkey(rt: Runtime, principal: Principal, passkey_id: int | None, client: Client) -> None:
    passkey_id = await _access_passkey(rt, principal, passkey_id)
    require_step_up(rt, principal)
    async with rt.uow() as uow:
        if not await queries.delete_passkey(uow.conn, principal.user_id, passkey_id):
            raise AppError("passkey.not_found")
        await record_security(uow, "passkey.revoke", principal.user_id, client, {"passkey_id": str(passkey_id)})
