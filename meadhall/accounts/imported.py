"""Imported authors (docs/imported-authors.md): accounts that hold history brought from another service.
Nobody signs in as one and nobody can reach one: every path that would is refused with 403 `user.imported`,
through this one predicate, so that the rule reads the same wherever it is applied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import select_user_imported
from meadhall.core.errors import AppError


def refuse_imported(row: Mapping[str, Any] | None) -> None:
    """403 `user.imported` when `row` (a `users` row, or any mapping carrying its `imported` column) is an
    imported author; nothing for a local account or no row (the caller answers its own not-found)."""
    if row is not None and row["imported"]:
        raise AppError("user.imported")


async def refuse_imported_id(conn: AsyncConnection, user_id: int) -> None:
    """`refuse_imported` for a user known by id only (the recipient of a private message in a room)."""
    refuse_imported({"imported": await select_user_imported(conn, user_id)})
