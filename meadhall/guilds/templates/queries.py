"""SQL for personal templates. Lookups are scoped by owner (house rule 6); never commits."""

from __future__ import annotations

from typing import cast

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import templates, users
from meadhall.guilds.rows import TemplateRow


async def lock_owner(conn: AsyncConnection, owner_id: int) -> None:
    """Serialise one user's template writes so that two concurrent saves cannot both pass the count
    check (row lock on PostgreSQL; SQLite write transactions are serial anyway and drop the clause)."""
    await conn.execute(select(users.c.id).where(users.c.id == owner_id).with_for_update())


async def count_templates(conn: AsyncConnection, owner_id: int) -> int:
    stmt = select(func.count()).select_from(templates).where(templates.c.owner_id == owner_id)
    return int((await conn.execute(stmt)).scalar_one())


async def insert_template(conn: AsyncConnection, row: TemplateRow) -> None:
    await conn.execute(insert(templates).values(dict(row)))


async def select_template(conn: AsyncConnection, owner_id: int, template_id: int) -> TemplateRow | None:
    stmt = select(templates).where(templates.c.owner_id == owner_id, templates.c.id == template_id)
    return cast("TemplateRow | None", (await conn.execute(stmt)).mappings().first())


async def select_templates(conn: AsyncConnection, owner_id: int) -> list[TemplateRow]:
    stmt = select(templates).where(templates.c.owner_id == owner_id).order_by(templates.c.id.desc())
    return cast("list[TemplateRow]", list((await conn.execute(stmt)).mappings()))


async def delete_template_row(conn: AsyncConnection, owner_id: int, template_id: int) -> None:
    await conn.execute(delete(templates).where(templates.c.owner_id == owner_id, templates.c.id == template_id))
