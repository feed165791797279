"""Deleting files, and finding the ones nobody holds any more (docs/files.md "Maintenance", the `orphan-files` command).

A file row goes in the transaction that drops its holder; its content is removed only after that
transaction commits (a rollback keeps both). Maintenance finds:

- unbound uploads older than the threshold (an attachment uploaded and never sent);
- dangling files: their holder went without them (a room or guild removed by a cascade, an expired
  invitation purged, a message gone);
- content on disk without a row (a crash between the commit and the removal), and spools of uploads
  that never finished.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from meadhall.core.clock import iso
from meadhall.db.uow import UnitOfWork
from meadhall.files import queries
from meadhall.filestore import FileStore, StoredContent
from meadhall.runtime import Runtime

log = structlog.get_logger("meadhall.files")

ORPHAN_HOURS = 24
JOB_EVERY = 3600.0
# Content without a row may belong to an upload whose transaction is still open: never younger than this.
STRAY_MIN_AGE = timedelta(minutes=10)
_BATCH = 500


async def remove_contents(store: FileStore, ids: Iterable[int]) -> None:
    for file_id in ids:
        try:
            await store.delete(file_id)
        except OSError:
            # The row is gone; the content is found again by `orphan-files` as content without a row.
            log.warning("file content not removed", file_id=file_id, exc_info=True)


async def drop_files(uow: UnitOfWork, store: FileStore, ids: Iterable[int | None]) -> list[int]:
    """Delete these file rows now and their content after the commit."""
    wanted = sorted({int(i) for i in ids if i is not None})
    if not wanted:
        return []
    await queries.delete_files(uow.conn, wanted)

    async def remove() -> None:
        await remove_contents(store, wanted)

    uow.after_commit(remove)
    return wanted


async def drop_message_files(uow: UnitOfWork, store: FileStore, message_id: int) -> None:
    await drop_files(uow, store, await queries.select_file_ids_of_message(uow.conn, message_id))


async def drop_channel_files(uow: UnitOfWork, store: FileStore, channel_id: int) -> None:
    """A room's uploads (sent or not) and its images, when the room is deleted."""
    await drop_files(uow, store, await queries.select_file_ids_of_channel(uow.conn, channel_id))


async def drop_guild_files(uow: UnitOfWork, store: FileStore, guild_id: int) -> None:
    """Everything of a guild: attachments of its rooms, its icon, banner, splash, backgrounds."""
    await drop_files(uow, store, await queries.select_file_ids_of_guild(uow.conn, guild_id))


def _listed(rows: list[queries.OrphanRow]) -> list[dict[str, Any]]:
    return [{"id": str(r["id"]), "size": int(r["size"]), "created_at": iso(r["created_at"])} for r in rows]


async def orphan_files(rt: Runtime, *, older_than_hours: float = ORPHAN_HOURS, remove: bool = False
                       ) -> dict[str, Any]:
    """Orphans created more than `older_than_hours` ago; deleted with `remove`. The answer of
    `meadhall orphan-files`: `{"files": [{"id", "size", "created_at"}], "deleted": n}`."""
    now = rt.clock.now()
    cutoff = now - timedelta(hours=older_than_hours)
    async with rt.read() as uow:
        unbound = await queries.select_unbound_before(uow.conn, cutoff)
        dangling = await queries.select_dangling_before(uow.conn, cutoff)
    stray = await _stray_content(rt, min(cutoff, now - STRAY_MIN_AGE).timestamp())
    listed = _listed(sorted(unbound + dangling, key=lambda r: r["id"]))
    listed += [{"id": str(c.file_id), "size": c.size, "created_at": iso(_utc(c.modified))}
               for c in stray if c.file_id is not None]
    deleted = 0
    if remove:
        deleted += await _delete_unbound(rt, [r["id"] for r in unbound])
        deleted += await _delete_dangling(rt, [r["id"] for r in dangling])
        for content in stray:
            await rt.files.remove(content)
            deleted += 1
    return {"files": listed, "deleted": deleted}


async def _delete_unbound(rt: Runtime, ids: list[int]) -> int:
    """Only while still unbound: an upload sent meanwhile is kept (conditional delete)."""
    deleted = 0
    for start in range(0, len(ids), _BATCH):
        batch = ids[start:start + _BATCH]
        async with rt.uow() as uow:
            gone = await queries.delete_unbound_files(uow.conn, batch)
        await remove_contents(rt.files, gone)
        deleted += len(gone)
    return deleted


async def _delete_dangling(rt: Runtime, ids: list[int]) -> int:
    """A holder never points at an existing file again (slots always take a new file): no re-check."""
    deleted = 0
    for start in range(0, len(ids), _BATCH):
        async with rt.uow() as uow:
            gone = await drop_files(uow, rt.files, ids[start:start + _BATCH])
        deleted += len(gone)
    return deleted


async def _stray_content(rt: Runtime, before: float) -> list[StoredContent]:
    """Content files without a row and unfinished spools, last written before `before`."""
    found = [c for c in await rt.files.scan() if c.modified < before]
    numbered = [c.file_id for c in found if c.file_id is not None]
    async with rt.read() as uow:
        known = await queries.select_existing_ids(uow.conn, numbered)
    return [c for c in found if c.file_id is None or c.file_id not in known]


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=UTC)


def add_orphan_job(rt: Runtime) -> None:
    """The hourly removal of orphans, run by one node per hour."""

    async def sweep() -> None:
        result = await orphan_files(rt, older_than_hours=ORPHAN_HOURS, remove=True)
        if result["deleted"]:
            log.info("orphan files deleted", deleted=result["deleted"])

    rt.jobs.add("orphan-files", JOB_EVERY, sweep)
