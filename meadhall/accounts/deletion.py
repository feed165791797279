"""The account's part of a soft deletion by an instance administrator (docs/admin.md "Soft deletion"): what
the account holds goes, and what identifies it for sign-in is wiped. The row itself stays: messages, audit
entries and one-to-one conversations keep pointing at it, and every view shows it as the deleted user."""

from __future__ import annotations

import secrets

from meadhall.accounts import queries
from meadhall.accounts.passkeys import queries as passkey_queries
from meadhall.accounts.queries import UserRow
from meadhall.accounts.signin import hash_password
from meadhall.accounts.twofactor import turn_off
from meadhall.auth.sessions import revoke_all
from meadhall.core.crypto import encrypt
from meadhall.db.uow import UnitOfWork
from meadhall.files.cleanup import drop_files
from meadhall.runtime import Runtime


async def unusable_password_hash(rt: Runtime) -> str:
    """A real hash of a secret nobody ever learns: no password matches it, and every reader of the column
    still finds a well-formed hash. Made before the write transaction opens (hashing is slow)."""
    return await hash_password(rt, secrets.token_urlsafe(32))


def placeholder_email(user_id: int) -> str:
    """What the wiped email column decrypts to: a reserved domain (RFC 2606), never a real address."""
    return f"deleted-{user_id}@deleted.invalid"


async def do_wipe_account(rt: Runtime, uow: UnitOfWork, user: UserRow, password_hash: str) -> list[int]:
    """Delete the sessions (SESSION_INVALIDATED `admin_action`), passkeys, TOTP and backup codes and the
    avatar file (its content once committed); wipe email and password, lift the instance ban and mark the
    account deleted. The username stays taken. Returns the deleted session ids."""
    user_id = user["id"]
    session_ids = await revoke_all(uow, user_id, "admin_action")
    await turn_off(uow, user_id)
    await passkey_queries.delete_user_passkeys(uow.conn, user_id)
    await drop_files(uow, rt.files, [user["avatar_file_id"]])
    await queries.update_user(uow.conn, user_id, {
        "email_enc": encrypt(rt.keys.email_enc, placeholder_email(user_id), aad=str(user_id).encode()),
        # The blind index is unique and required: a random value of its shape frees the real address for
        # a new account and can never be the index of an address.
        "email_index": secrets.token_hex(32),
        "password_hash": password_hash,
        "password_reset_required": False,
        "avatar_file_id": None,
        "banned_at": None,
        "ban_reason": None,
        "banned_by": None,
        "deleted_at": uow.now,
    })
    return session_ids
