"""Who may fetch a file (docs/files.md "Serving"): one rule per purpose. A file the caller may not fetch
answers exactly like a missing one, 404 `file.not_found` (docs/reference/errors.md).

Files know no domain: `avatar` and `banner` files are public to any signed-in user; every other purpose
is fetched only through the rule its owning domain adds to `fetch_rules`, under the purpose's name, when the
app is built (`attachment`: `meadhall.messages.attachments`; `dm_icon`: `meadhall.social.conversations`). A
purpose without a rule is served to nobody.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.core.hooks import Hook
from meadhall.core.ids import parse_id
from meadhall.files import queries
from meadhall.files.queries import FileRow

PUBLIC_PURPOSES = ("avatar", "banner")

# (connection, caller, file row, now) -> may the caller fetch it; added under the purpose it decides
FetchRule = Callable[[AsyncConnection, Principal, FileRow, datetime], Awaitable[bool]]
fetch_rules: Hook[FetchRule] = Hook()


async def access_file(conn: AsyncConnection, principal: Principal, raw_id: str, now: datetime) -> FileRow:
    """The file if the caller may fetch it; else 404 `file.not_found`."""
    file_id = parse_id(raw_id)
    row = None if file_id is None else await queries.select_file(conn, file_id)
    if row is None or not await check_fetch(conn, principal, row, now):
        raise AppError("file.not_found")
    return row


async def check_fetch(conn: AsyncConnection, principal: Principal, row: FileRow, now: datetime) -> bool:
    purpose = row["purpose"]
    if purpose in PUBLIC_PURPOSES:
        return True
    rule = fetch_rules.get(purpose)
    return rule is not None and await rule(conn, principal, row, now)
