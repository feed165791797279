"""`meadhall export-guild` (docs/migrating.md, "Between Meadhall instances"): one guild as a `meadhall-guild`
archive of version 1, from one consistent read of the database (a single read transaction: REPEATABLE READ on
PostgreSQL, one WAL snapshot on SQLite), so a guild in use exports as it was at one moment.

Members are written as they are read: each room's messages go a batch at a time into a temporary file (a tar
header needs the size first) and from there into the archive; the files are streamed from the store. Memory
holds one batch of messages and the sets of users and files named. Direct conversations are never read: only
the guild's own rooms are."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from meadhall import __version__
from meadhall.core.errors import AppError
from meadhall.db import dialect
from meadhall.db.migrate import schema_revision
from meadhall.porting.archive import export_read as read
from meadhall.porting.archive.format import (
    FORMAT,
    GUILD,
    MANIFEST,
    USERS,
    VERSION,
    file_member,
    messages_member,
)
from meadhall.porting.archive.tarstream import ArchiveWriter
from meadhall.runtime import Runtime

Progress = Callable[[int], None]


async def export_guild(rt: Runtime, guild_id: int, out: Path, *, progress: Progress | None = None,
                       total: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Write the archive to `out` (refused when it exists: `export.exists`); `total` is told the number of
    messages to write, `progress` how many were written since its last call."""
    revision = await schema_revision(rt.engine)
    now = rt.clock.now()
    writer = ArchiveWriter(out, now.timestamp())
    try:
        counts = await _write_members(rt, guild_id, writer, progress, total)
        manifest = {"format": FORMAT, "version": VERSION, "exported_at": now.isoformat(),
                    "source": {"public_url": rt.settings.public_origin, "meadhall_version": __version__,
                               "schema_revision": revision},
                    "counts": counts, "sha256": dict(sorted(writer.digests.items()))}
        writer.add_bytes(MANIFEST, orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
        size = writer.finish()
    except BaseException:
        writer.discard()
        raise
    return {"guild_id": str(guild_id), "path": str(out), "rooms": counts["rooms"], "messages": counts["messages"],
            "files": counts["files"], "bytes": size}


async def _write_members(rt: Runtime, guild_id: int, writer: ArchiveWriter, progress: Progress | None,
                         total: Callable[[int], None] | None) -> dict[str, int]:
    refs = read.References()
    async with dialect.snapshot_read(rt.engine) as conn:
        guild = await read.select_guild_row(conn, guild_id)
        if guild is None:
            raise AppError("guild.not_found")
        doc = await read.select_guild_doc(conn, guild, refs)
        if total is not None:
            total(await read.count_messages(conn, [int(r["id"]) for r in doc["rooms"]]))
        written = 0
        for room in doc["rooms"]:
            with tempfile.TemporaryFile(dir=writer.final.parent) as spool:
                async for batch in read.message_batches(conn, int(room["id"]), refs):
                    spool.write(b"".join(orjson.dumps(m) + b"\n" for m in batch))
                    written += len(batch)
                    if progress is not None:
                        progress(len(batch))
                writer.add_spooled(messages_member(int(room["id"])), spool)
        summaries = await read.select_user_summaries(conn, refs.user_ids, refs)
        file_rows = await read.select_file_rows(conn, refs)
        present = {str(f["id"]) for f in file_rows}
        read.drop_missing_files(doc, summaries, present)
        doc["files"] = [read.file_doc(f, refs) for f in file_rows]
        writer.add_bytes(GUILD, orjson.dumps(doc))
        writer.add_bytes(USERS, orjson.dumps({"users": summaries}))
        for f in file_rows:
            reader = await rt.files.open(int(f["id"]))
            await writer.add_stream(file_member(int(f["id"])), int(f["size"]), reader)
    return {"rooms": len(doc["rooms"]), "messages": written, "files": len(file_rows), "users": len(summaries)}
