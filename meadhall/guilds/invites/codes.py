"""Invitation rows: code generation and insertion, shared by invites and the public-server flag."""

from __future__ import annotations

import secrets
import string
from datetime import timedelta
from typing import cast

from sqlalchemy import delete, insert, select

from meadhall.db.schema import invites
from meadhall.db.uow import UnitOfWork
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
        taken = (await uow.conn.execute(select(invites.c.code).where(invites.c.code == code))).first()
        if taken is None:
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
    await uow.conn.execute(insert(invites).values(dict(values)))
    # Read back: the row as every reader sees it (timestamps as the database returns them).
    row = (await uow.conn.execute(select(invites).where(invites.c.code == code))).mappings().first()
    assert row is not None
    return cast(InviteRow, row)


async def delete_public_invite(uow: UnitOfWork, guild_id: int) -> None:
    await uow.conn.execute(delete(invites).where(invites.c.guild_id == guild_id, invites.c.is_public.is_(True)))
