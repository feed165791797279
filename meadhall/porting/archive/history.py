"""The second pass of `meadhall import-guild` (docs/migrating.md, "Between Meadhall instances"): the verified
archive read again, writing each room's messages through the batch writer and storing every file under its new
id. Each member is hashed again as it is read; one that differs from the first pass (the archive changed in
between) fails the import, which then leaves nothing behind.

The batch writer's message takes the fields a Discord export has; an archive's messages also carry private
recipients, webhook snapshots, room mentions, `@everyone` and suppressed embeds, so `ArchiveWriter` writes
whole rows into the writer's own batches, with the mention rows every message write keeps."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

from sqlalchemy import insert

from meadhall.core.text import norm
from meadhall.db.schema import files
from meadhall.db.schema.messages import everyone_mentions
from meadhall.db.uow import UnitOfWork
from meadhall.messages.queries import mention_rows
from meadhall.porting.archive import shapes
from meadhall.porting.archive.format import corrupt, member_id
from meadhall.porting.archive.idmap import IdMap
from meadhall.porting.archive.verify import Verified, message_lines, open_members, parse_message
from meadhall.porting.history_ids import HistoryIds
from meadhall.porting.progress import Bar
from meadhall.porting.writer import BATCH, BatchWriter
from meadhall.runtime import Runtime

_CHUNK = 1024 * 1024
FILE_ROWS_PER_STATEMENT = 1000
COMMIT_EVERY = 2000  # messages per transaction (porting/transactions.py says why not one)


class ArchiveWriter(BatchWriter):
    """The batch writer, writing whole archived message rows (see the module's docstring)."""

    def __init__(self, rt: Runtime, uow: UnitOfWork, guild_id: int, default_role_id: int) -> None:
        super().__init__(rt, uow, guild_id, default_role_id)
        self._everyone: list[dict[str, Any]] = []

    async def archived(self, room_id: int, m: shapes.Message, ids: IdMap) -> int:
        message_id = await self._ids.next(m.created_at)
        ids.set_message(m.id, message_id, keep=bool(m.attachment_ids))
        event = None if m.system_event is None else {
            "type": m.system_event.type, "user_id": _sid(ids.maybe(m.system_event.user_id)),
            "actor_id": _sid(ids.maybe(m.system_event.actor_id)), "via": m.system_event.via}
        content = ids.text(m.content)
        hook = m.webhook
        pinned_at = (m.pinned_at or m.created_at) if m.pinned else None
        row: dict[str, Any] = {
            "id": message_id, "channel_id": room_id, "guild_id": self.guild_id, "author_id": ids.maybe(m.author_id),
            "webhook_id": None if hook is None else ids.new(hook.id), "webhook_name": None if hook is None else hook.name,
            "webhook_avatar": None if hook is None else hook.avatar, "content": content, "content_norm": norm(content),
            "kind": m.kind, "recipient_id": ids.maybe(m.recipient_id), "system_event": event, "nonce": None,
            "reply_to_id": ids.maybe(m.reply_to_id), "mentions": [str(ids.new(u)) for u in m.mentions],
            "mention_channels": [str(ids.known(c) or c) for c in m.mention_channels],
            "mention_everyone": m.mention_everyone, "suppress_embeds": m.suppress_embeds, "pinned": m.pinned,
            "pinned_at": pinned_at, "created_at": m.created_at, "edited_at": m.edited_at, "reacted": False,
            "has_attachments": False}
        self._messages.append(row)
        self._buffered[message_id] = row
        named, everyone = mention_rows(row)  # type: ignore[arg-type]  # a whole row of `messages`
        self._mentions.extend(named)
        if everyone is not None:
            self._everyone.append(everyone)
        for reaction in m.reactions:
            for user in reaction.user_ids:
                self.reaction(message_id, ids.text(reaction.emoji), ids.new(user), m.created_at)
        self.counts.messages += 1
        if len(self._messages) >= BATCH:
            await self.flush()
        return message_id

    async def next_room(self) -> None:
        """Ids for another room's history, from its own source times: a generator shared by all rooms would
        put each room's messages after the previous room's last id (its +1 rule), whatever their times. What
        is buffered is written first, so that the new generator sees, and skips, the ids taken so far."""
        await self.flush()
        self._ids = HistoryIds(self.conn)

    async def flush(self) -> None:
        await super().flush()
        if self._everyone:
            await self.conn.execute(insert(everyone_mentions), self._everyone)
            self._everyone = []


def _sid(value: int | None) -> str | None:
    return None if value is None else str(value)


async def write_history(writer: ArchiveWriter, src: Path, verified: Verified, ids: IdMap, bar: Bar,
                        skip_files: set[str], checkpoint: Callable[[], Awaitable[None]]) -> int:
    """Messages and files, member by member, `checkpoint` (a commit) every COMMIT_EVERY messages; returns
    the number of files stored. The file rows come last, in the last transaction."""
    stored_files = {f.id: f for f in verified.guild.files}
    rows: list[dict[str, Any]] = []
    # The archive may change between the passes: every member must be one the first pass verified, and
    # every verified member must come back, or the import would write what was never checked, or miss data.
    unread = set(verified.digests)
    for info, handle in open_members(src):
        name = info.name
        if name not in unread:
            raise corrupt(f"member {name!r} appeared while the archive was imported")
        unread.discard(name)
        if name.startswith("messages/"):
            digest = hashlib.sha256()
            room_id = ids.new(str(member_id(name)))
            ids.next_room()
            await writer.next_room()
            for line in message_lines(handle, digest):
                await writer.archived(room_id, parse_message(line), ids)
                bar.advance()
                if writer.counts.messages % COMMIT_EVERY == 0:
                    await checkpoint()
        elif name.startswith("files/"):
            stored = stored_files[str(member_id(name))]
            if stored.id in skip_files:
                continue
            digest = await _store(writer, handle, ids.new(stored.id), stored)
            rows.append(_file_row(stored, ids, writer.guild_id))
        else:
            digest = hashlib.sha256(handle.read())
        if digest.hexdigest() != verified.digests[name]:
            raise corrupt(f"member {name!r} changed while it was imported")
    if unread:
        raise corrupt(f"member {sorted(unread)[0]!r} disappeared while the archive was imported")
    await writer.flush()  # the messages exist before the files that name them
    for start in range(0, len(rows), FILE_ROWS_PER_STATEMENT):
        await writer.conn.execute(insert(files), rows[start:start + FILE_ROWS_PER_STATEMENT])
    return len(rows)


async def _store(writer: BatchWriter, handle: IO[bytes], new_id: int, stored: shapes.StoredFile) -> Any:
    """The content under its new id, through a spool as an upload's is; the writer removes it again when the
    import does not commit."""
    digest = hashlib.sha256()
    spool = await writer.rt.files.new_spool()
    try:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            await spool.write(chunk)
        writer.stored_files.append(new_id)
        await writer.rt.files.put(new_id, spool)
    except BaseException:
        spool.discard()
        raise
    if digest.hexdigest() != stored.sha256:
        raise corrupt(f"file {stored.id} changed while it was imported")
    return digest


def _file_row(stored: shapes.StoredFile, ids: IdMap, guild_id: int) -> dict[str, Any]:
    holder = ids.maybe(stored.owner_id)
    return {"id": ids.new(stored.id), "purpose": stored.purpose, "uploader_id": ids.known(stored.uploader_id),
            "original_name": stored.original_name, "content_type": stored.content_type, "size": stored.size,
            "sha256": stored.sha256, "meta": stored.meta, "guild_id": guild_id, "channel_id": ids.maybe(stored.room_id),
            "message_id": holder if stored.owner == "message" else None, "position": stored.position,
            "owner": stored.owner, "owner_id": holder, "owner_key": None, "created_at": stored.created_at}
