"""SQL for passkeys, scoped by their account. Returns typed rows; never commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import passkeys


class PasskeyRow(TypedDict):
    """One row of `passkeys`."""

    id: int
    user_id: int
    credential_id: str
    public_key: bytes
    sign_count: int
    transports: list[str]
    backed_up: bool
    name: str
    user_handle: str
    created_at: datetime
    last_used_at: datetime | None


async def select_user_passkeys(conn: AsyncConnection, user_id: int) -> list[PasskeyRow]:
    rows = await conn.execute(select(passkeys).where(passkeys.c.user_id == user_id).order_by(passkeys.c.id))
    return [cast(PasskeyRow, dict(r._mapping)) for r in rows]


async def select_passkey(conn: AsyncConnection, user_id: int, passkey_id: int) -> PasskeyRow | None:
    row = (await conn.execute(
        select(passkeys).where(passkeys.c.user_id == user_id, passkeys.c.id == passkey_id))).first()
    return None if row is None else cast(PasskeyRow, dict(row._mapping))


async def select_passkey_by_credential(conn: AsyncConnection, credential_id: str) -> PasskeyRow | None:
    row = (await conn.execute(select(passkeys).where(passkeys.c.credential_id == credential_id))).first()
    return None if row is None else cast(PasskeyRow, dict(row._mapping))


async def count_user_passkeys(conn: AsyncConnection, user_id: int) -> int:
    return int((await conn.execute(
        select(func.count()).select_from(passkeys).where(passkeys.c.user_id == user_id))).scalar_one())


async def select_user_handle(conn: AsyncConnection, user_id: int) -> str | None:
    """The account's user handle, held by each of its passkeys (None before the first)."""
    return cast(str | None, (await conn.execute(
        select(passkeys.c.user_handle).where(passkeys.c.user_id == user_id).limit(1))).scalar())


async def insert_passkey(conn: AsyncConnection, row: PasskeyRow) -> None:
    await conn.execute(insert(passkeys).values(**row))


async def update_passkey(conn: AsyncConnection, user_id: int, passkey_id: int, values: dict[str, Any]) -> bool:
    result = await conn.execute(
        update(passkeys).where(passkeys.c.user_id == user_id, passkeys.c.id == passkey_id).values(**values))
    return result.rowcount == 1


async def update_passkey_use(conn: AsyncConnection, passkey_id: int, old_count: int, new_count: int,
                             values: dict[str, Any]) -> bool:
    """Record a use unless another use moved the counter meanwhile: of two sign-ins presenting the same
    counter at once, only one is accepted. Counters that stay 0 (authenticators without one) never race."""
    result = await conn.execute(
        update(passkeys).where(passkeys.c.id == passkey_id, passkeys.c.sign_count == old_count)
        .values(sign_count=new_count, **values))
    return result.rowcount == 1


async def delete_passkey(conn: AsyncConnection, user_id: int, passkey_id: int) -> bool:
    result = await conn.execute(delete(passkeys).where(passkeys.c.user_id == user_id, passkeys.c.id == passkey_id))
    return result.rowcount == 1


async def delete_user_passkeys(conn: AsyncConnection, user_id: int) -> int:
    """All of the account's passkeys (soft deletion of the account, docs/admin.md)."""
    result = await conn.execute(delete(passkeys).where(passkeys.c.user_id == user_id))
    return int(result.rowcount or 0)
