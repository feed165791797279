"""The CSV export of the instance audit log (OpenAPI: exportInstanceAuditLog; docs/audit.md): newest first,
fetched in keyset pages by id so memory stays flat however large the log, formula-like cells defused, and
a last line carrying the SHA-256 of everything before it."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import datetime

from meadhall.accounts.queries import SUMMARY_COLUMNS
from meadhall.accounts.views import user_summary
from meadhall.audit.queries import AuditFilters, AuditPageRow, select_audit_page
from meadhall.core.clock import iso
from meadhall.core.ids import sid
from meadhall.runtime import Runtime

EXPORT_MAX = 100_000
EXPORT_BATCH = 1000
COLUMNS = ("id", "created_at", "action", "actor_id", "actor_username", "target_type", "target_id", "guild_id",
           "reason", "data")
_FORMULA_STARTS = ("=", "+", "-", "@")

def csv_cell(value: str | None) -> str:
    """A spreadsheet runs a cell that starts like a formula; the leading `'` makes it text."""
    if value is None:
        return ""
    return "'" + value if value.startswith(_FORMULA_STARTS) else value


def csv_row(row: AuditPageRow, now: datetime) -> list[str]:
    e = row.entry
    username = None if row.actor is None else user_summary(row.actor, now)["username"]
    data = json.dumps(e["data"] or {}, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    cells = (sid(e["id"]), iso(e["created_at"]), e["action"], sid(e["actor_id"]), username, e["target_type"],
             sid(e["target_id"]), sid(e["guild_id"]), e["reason"], data)
    return [csv_cell(c) for c in cells]

@dataclass(frozen=True)
class AuditExport:
    """An authorised export: its file name, and its rows read when the response is sent."""

    rt: Runtime
    filters: AuditFilters
    filename: str

    async def stream(self) -> AsyncIterator[bytes]:
        digest = hashlib.sha256()
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")

        def take() -> bytes:
            chunk = buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
            digest.update(chunk)
            return chunk

        writer.writerow(COLUMNS)
        yield take()
        async for rows, now in self._pages():
            writer.writerows(csv_row(r, now) for r in rows)
            yield take()
        yield f"# sha256={digest.hexdigest()}\r\n".encode("ascii")

    async def _pages(self) -> AsyncIterator[tuple[list[AuditPageRow], datetime]]:
        """Up to EXPORT_MAX entries, one read transaction per page of EXPORT_BATCH (none held open while
        the client reads)."""
        remaining, filters = EXPORT_MAX, replace(self.filters, before_id=None)
        while remaining > 0:
            async with self.rt.read() as uow:
                rows, has_more = await select_audit_page(uow.conn, filters, min(EXPORT_BATCH, remaining),
                                                         actor_columns=SUMMARY_COLUMNS)
            if rows:
                yield rows, uow.now
            remaining -= len(rows)
            if not has_more or not rows:
                return
            filters = replace(filters, before_id=rows[-1].entry["id"])

def export_filename(now: datetime) -> str:
    return f"audit-{now:%Y%m%d-%H%M%S}.csv"

def export_of(rt: Runtime, filters: AuditFilters, now: datetime) -> AuditExport:
    return AuditExport(rt, filters, export_filename(now))
