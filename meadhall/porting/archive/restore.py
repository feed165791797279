"""`meadhall import-guild` (docs/migrating.md, "Between Meadhall instances"): a new guild from a `meadhall-guild`
archive of version 1, with new ids, owned by the given account.

The archive is verified whole first (`verify.py`): nothing is written for an archive that fails. The import is
then one transaction (the batch writer never commits), so a failure part-way (a full disk, a constraint)
leaves no guild, no imported author and no row behind; the file content it had stored is removed again. No
event is sent: the new guild appears in READY and in the owner's guild list."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from meadhall.audit.record import record
from meadhall.porting.archive import mapping, structure
from meadhall.porting.archive.history import ArchiveWriter, write_history
from meadhall.porting.archive.idmap import IdMap
from meadhall.porting.archive.verify import Verified, verify_archive
from meadhall.porting.progress import progress
from meadhall.runtime import Runtime


async def import_guild(rt: Runtime, src: Path, *, owner_email: str, name: str | None = None,
                       map_users: Path | None = None) -> dict[str, Any]:
    wanted = mapping.read_user_map(map_users)
    with progress("Checking the archive") as bar:
        verified = await asyncio.to_thread(verify_archive, src, bar.advance)
    writer: ArchiveWriter | None = None
    try:
        async with rt.uow() as uow:
            owner = await mapping.owner_id(rt, uow, owner_email)
            mapped = await mapping.local_accounts(uow, wanted, {u.id for u in verified.users.users})
            ids = IdMap(uow.next_id)
            guild_id = await structure.new_guild(uow, verified.guild, ids, owner_id=owner, name=name)
            writer = ArchiveWriter(rt, uow, guild_id, guild_id)
            result = await _write(writer, src, verified, ids, owner, mapped)
            await record(uow, "guild.import", actor_id=None, target_type="guild", target_id=writer.guild_id,
                         guild_id=writer.guild_id, data={"source": "meadhall", **_counts(result)})
    except BaseException:
        if writer is not None:
            await writer.discard_stored()
        raise
    return result


async def _write(writer: ArchiveWriter, src: Path, verified: Verified, ids: IdMap, owner: int,
                 mapped: dict[str, int]) -> dict[str, Any]:
    doc = verified.guild
    imported = await structure.people(writer, verified.users, ids, mapped)
    await structure.expressions(writer.uow, doc, ids, writer.guild_id)
    await structure.rooms(writer.uow, doc, ids, writer.guild_id)
    await structure.memberships(writer, doc, ids, owner)
    await structure.room_webhooks(writer.uow, doc, ids, writer.guild_id, owner)
    # A mapped account keeps its own avatar: its source avatar is not brought over.
    skip = {u.avatar_file_id for u in verified.users.users if u.id in mapped and u.avatar_file_id}
    total = sum(verified.messages_per_room.values())
    with progress("Importing messages", total=total) as bar:
        files = await write_history(writer, src, verified, ids, bar, skip)
    await writer.finish(readers=[owner, *mapped.values()])
    return {"guild_id": str(writer.guild_id), "rooms": len(doc.rooms), "messages": writer.counts.messages,
            "files": files, "authors": {"mapped": len(mapped), "imported": imported}}


def _counts(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("rooms", "messages", "files", "authors")}
