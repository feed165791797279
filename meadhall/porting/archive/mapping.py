"""Who is who in the new guild (docs/migrating.md, "Between Meadhall instances"): the owner named by email, and
`--map-users`, a CSV file of lines `source_user_id,local_username`, naming the local accounts that take the place
of the archive's users; every other user of the archive becomes an imported author."""

from __future__ import annotations

import csv
from pathlib import Path

from meadhall.accounts import queries as account_queries
from meadhall.accounts.signin import email_lookup
from meadhall.core.errors import AppError
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.porting.archive.format import ArchiveError
from meadhall.runtime import Runtime


def read_user_map(path: Path | None) -> dict[str, str]:
    """source user id -> local username, from the CSV file (blank lines and a `#` comment line are skipped)."""
    if path is None:
        return {}
    if not path.is_file():
        raise ArchiveError("import.not_found", f"{path} is not a file")
    wanted: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            cells = [c.strip() for c in row]
            if not cells or not any(cells) or cells[0].startswith("#"):
                continue
            if len(cells) != 2 or not cells[0] or not cells[1]:
                raise AppError("validation.failed", f"{path} line {number}: expected source_user_id,local_username")
            wanted[cells[0]] = cells[1]
    return wanted


async def owner_id(rt: Runtime, uow: UnitOfWork, email: str) -> int:
    row = await account_queries.select_user_by_email(uow.conn, email_lookup(rt, email.strip()))
    if row is None or row["deleted_at"] is not None or row["imported"]:
        raise AppError("user.not_found", f"No account with email {email}")
    return int(row["id"])


async def local_accounts(uow: UnitOfWork, wanted: dict[str, str], source_ids: set[str]) -> dict[str, int]:
    """source user id -> local account id; a source id the archive does not hold is ignored, an unknown or
    imported local username refused (`user.not_found`)."""
    found: dict[str, int] = {}
    for source, username in wanted.items():
        if source not in source_ids:
            continue
        row = await account_queries.select_user_by_username(uow.conn, norm(username))
        if row is None or row["deleted_at"] is not None or row["imported"]:
            raise AppError("user.not_found", f"--map-users: no local account named {username}")
        found[source] = int(row["id"])
    return found
