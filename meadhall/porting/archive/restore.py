"""`meadhall import-guild` (docs/migrating.md, "Between Meadhall instances"): a new guild from a `meadhall-guild`
archive of version 1, with new ids, owned by the given account.

The archive is verified whole first (`verify.py`): nothing is written for an archive that fails. The import then
commits every few thousand messages (one transaction is quadratic on PostgreSQL: porting/transactions.py), and
a failure part-way (a full disk, a constraint) is undone: no guild, imported author or row is left behind, and
the file content it had stored is removed again. Local accounts (the owner, mapped users) join in the last
transaction, so nobody sees the guild before it is whole. No event is sent: the new guild appears in READY and
in its members' guild lists."""

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
from meadhall.porting.transactions import Batches, undo
from meadhall.runtime import Runtime


async def import_guild(rt: Runtime, src: Path, *, owner_email: str, name: str | None = None,
                       map_users: Path | None = None) -> dict[str, Any]:
    wanted = mapping.read_user_map(map_users)
    with progress("Checking the archive") as bar:
        verified = await asyncio.to_thread(verify_archive, src, bar.advance)
    batches = Batches(rt)
    writer: ArchiveWriter | None = None
    try:
        uow = await batches.begin()
        owner = await mapping.owner_id(rt, uow, owner_email)
        mapped = await mapping.local_accounts(uow, wanted, {u.id for u in verified.users.users})
        ids = IdMap(rt.ids.next)
        guild_id = await structure.new_guild(uow, verified.guild, ids, owner_id=owner, name=name)
        writer = ArchiveWriter(rt, uow, guild_id, guild_id)
        writer.created.guild = True  # what `undo` removes should a later batch fail
        result = await _write(writer, batches, src, verified, ids, owner, mapped)
        await record(writer.uow, "guild.import", actor_id=None, target_type="guild", target_id=writer.guild_id,
                     guild_id=writer.guild_id, data={"source": "meadhall", **_counts(result)})
        await batches.commit()
    except BaseException as error:
        await batches.abort(error)
        if writer is not None:
            await undo(rt, writer)
            await writer.discard_stored()
        raise
    return result


async def _write(writer: ArchiveWriter, batches: Batches, src: Path, verified: Verified, ids: IdMap, owner: int,
                 mapped: dict[str, int]) -> dict[str, Any]:
    doc = verified.guild
    local = {owner, *mapped.values()}
    imported = await structure.people(writer, verified.users, ids, mapped)
    await structure.expressions(writer.uow, doc, ids, writer.guild_id)
    await structure.rooms(writer.uow, doc, ids, writer.guild_id)
    await structure.memberships(writer, doc, ids, lambda user: user not in local)
    await structure.bans(writer, doc, ids, owner)
    await structure.room_webhooks(writer.uow, doc, ids, writer.guild_id, owner)
    # A mapped account keeps its own avatar: its source avatar is not brought over.
    skip = {u.avatar_file_id for u in verified.users.users if u.id in mapped and u.avatar_file_id}

    async def checkpoint() -> None:
        await writer.flush()
        writer.switch(await batches.next())

    total = sum(verified.messages_per_room.values())
    with progress("Importing messages", total=total) as bar:
        files = await write_history(writer, src, verified, ids, bar, skip, checkpoint)
    # The last transaction: the local accounts join, so the guild appears to them whole.
    await structure.memberships(writer, doc, ids, lambda user: user in local)
    await writer.members([(owner, None)])
    await writer.finish(readers=[owner, *mapped.values()])
    return {"guild_id": str(writer.guild_id), "rooms": len(doc.rooms), "messages": writer.counts.messages,
            "files": files, "authors": {"mapped": len(mapped), "imported": imported}}


def _counts(result: dict[str, Any]) -> dict[str, Any]:
    return {k: result[k] for k in ("rooms", "messages", "files", "authors")}
