"""Invitation codes: a new invitation with a fresh code, shared by invites and the public-server flag."""

from __future__ import annotations

import secrets
import string
from datetime import timedelta

from meadhall.db.uow import UnitOfWork
from meadhall.guilds.invites import queries
from meadhall.guilds.rows import InviteRow

CODE_ALPHABET = string.ascii_lowercase + string.digits
CODE_LENGTH = 8


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


async def insert_invite(
    uow: UnitOfWork, *, guild_id: int, channel_id: int, inviter_id: int | None, max_age_seconds: int,
    max_uses: int, is_public: bool = False,
) -> InviteRow:
    """A new invitation with a fresh code (36^8 codes: a collision is retried, not expected)."""
    for _ in range(5):
        code = new_code()
        if not await queries.select_invite_code_taken(uow.conn, code):
            break
    values: InviteRow = {
        "code": code,
        "guild_id": guild_id,
        "channel_id": channel_id,
        "inviter_id": inviter_id,
        "max_age_seconds": max_age_seconds,
        "max_uses": max_uses,
        "uses": 0,
        "expires_at": uow.now + timedelta(seconds=max_age_seconds) if max_age_seconds else None,
        "is_public": is_public,
        "background_file_id": None,
        "created_at": uow.now,
    }
    await queries.insert_invite_row(uow.conn, values)
    # Read back: the row as every reader sees it (timestamps as the database returns them).
    row = await queries.select_invite(uow.conn, code)
    assert row is not None
    return row
