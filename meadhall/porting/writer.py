"""The batch writer of the importers (docs/migrating.md): one guild's structure, authors and history
written in large statements inside the caller's transaction, without a service call per row.

It is generic: the Discord importer (porting/discord/) and the guild-archive importer (porting/archive/)
both drive it. It never authorises (operator commands run as the system actor), never emits events (an
imported guild appears in READY), and never commits: the caller does, either once at the end (one unit of
work: a failure anywhere leaves nothing behind), or after a `flush` every few thousand messages, continuing
with `switch(next_uow)`; the writer records what it created (`created`) so that porting/transactions.py can
undo committed batches when the import fails later (docs/migrating.md, "Safety"). PostgreSQL needs the
second way for large imports: porting/transactions.py says why.

    writer = await BatchWriter.new_guild(rt, uow, owner_id=owner, name="Old server")   # or .existing(...)
    role_id = await writer.role("Moderators", color=0x3498DB, position=2)
    cat_id = await writer.room("Text", type_="category", position=0)
    room_id = await writer.room("general", parent_id=cat_id, position=0)
    authors = await writer.imported_authors([AuthorSpec("alice", "Alice")])            # porting/authors.py
    await writer.members([(user_id, None)]); await writer.member_roles([(user_id, role_id)])
    message_id = await writer.message(MessageSpec(room_id, author_id, "hi", created_at=...))
    writer.reaction(message_id, "👍", user_id, at); writer.pin(message_id, at)
    await writer.attach(message_id, room_id, position, path, name, author_id)         # porting/local_files.py
    writer.link("message", source_id, message_id)      # import_links, for a later import --into
    await writer.finish(readers=[owner])               # flushes, member_count, read marks

Message ids come from the source time (porting/history_ids.py), so history sorts in the source's order.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Table, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core import permissions as perms
from meadhall.core.text import norm
from meadhall.db import dialect
from meadhall.db.schema import (
    channels,
    emojis,
    guilds,
    member_roles,
    members,
    messages,
    reactions,
    read_states,
    roles,
    users,
)
from meadhall.db.schema.imports import import_links
from meadhall.db.schema.messages import user_mentions
from meadhall.db.uow import UnitOfWork
from meadhall.files.limits import media_limits
from meadhall.guilds.emojis import queries as emoji_queries
from meadhall.guilds.structure import channel_row
from meadhall.porting import authors as author_rows
from meadhall.porting import local_files
from meadhall.porting.history_ids import HistoryIds
from meadhall.runtime import Runtime

BATCH = 5000  # messages per flush: large statements, bounded memory
DEFAULT_ROLE_NAME = "User"
OWNER_ROLE_NAME = "Administrator"
_LINK_CHUNK = 500  # source ids per lookup statement (well under every parameter limit)

AuthorSpec = author_rows.AuthorSpec
# Where the local row of each kind of link lives (`message` links are checked by the importer's history).
_LINKED_TABLES: dict[str, Table] = {"room": channels, "category": channels, "role": roles, "user": users,
                                    "emoji": emojis}
# With RETURNING, SQLAlchemy sends a list of rows as multi-row INSERT statements (its "insertmanyvalues"
# batches) instead of one statement per row: the per-row triggers on `messages` (search index, room version,
# room days) then run inside a few large statements, which on SQLite is about 3 times faster.
_MESSAGES = insert(messages).returning(messages.c.id)


@dataclass(frozen=True)
class MessageSpec:
    """One message to write. `kind` is `normal` or `system` (then `system_event` is set, author None)."""

    channel_id: int
    author_id: int | None
    content: str
    created_at: datetime
    edited_at: datetime | None = None
    reply_to_id: int | None = None
    pinned_at: datetime | None = None
    mentions: Sequence[int] = ()
    kind: str = "normal"
    system_event: dict[str, Any] | None = None


@dataclass
class Created:
    guild: bool = False
    users: list[int] = field(default_factory=list)
    rooms: list[int] = field(default_factory=list)
    roles: list[int] = field(default_factory=list)
    emojis: list[int] = field(default_factory=list)
    members: list[int] = field(default_factory=list)  # memberships added to an existing guild
    messages: array[int] = field(default_factory=lambda: array("q"))


@dataclass
class Counts:
    messages: int = 0
    reactions: int = 0
    attachments: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + count


class BatchWriter:
    def __init__(self, rt: Runtime, uow: UnitOfWork, guild_id: int, default_role_id: int) -> None:
        self.rt = rt
        self.uow = uow
        self.conn: AsyncConnection = uow.conn
        self.guild_id = guild_id
        self.default_role_id = default_role_id
        self.owner_id = 0
        self.owner_role = 0
        self.counts = Counts()
        self._ids = HistoryIds(uow.conn)
        self._messages: list[dict[str, Any]] = []
        self._buffered: dict[int, dict[str, Any]] = {}  # id -> row of `_messages`
        self._mentions: list[dict[str, int]] = []
        self._reactions: list[dict[str, Any]] = []
        self._pins: list[dict[str, Any]] = []
        self._links: list[dict[str, Any]] = []
        self._files: list[local_files.Pending] = []
        self.stored_files: list[int] = []  # content put in the file store by this import
        self._written: dict[int, int] = {}  # room id -> the newest message id this run wrote there
        # What this writer created, for `porting/undo.py` when an import committed in batches fails.
        self.created = Created()

    # ---- the guild and its structure --------------------------------------------------------------

    @classmethod
    async def new_guild(cls, rt: Runtime, uow: UnitOfWork, *, owner_id: int, name: str,
                        description: str | None = None, owner_joins: bool = True) -> BatchWriter:
        """A new guild owned by `owner_id`, as bootstrap makes one: the default role (`User`, the default
        permission set), `Administrator` (every permission, position 1) held by the owner. Rooms and the system
        room come after (`room`, `set_system_room`). `owner_joins=False` leaves the owner out until
        `add_owner` (an import committed in batches: nobody sees the guild before it is whole)."""
        guild_id = uow.next_id()
        await uow.conn.execute(insert(guilds).values(
            id=guild_id, name=name, name_norm=norm(name), description=description, icon_file_id=None,
            banner_file_id=None, splash_file_id=None, owner_id=owner_id, member_count=1, system_channel_id=None,
            public=False, public_invite_code=None, is_main=False, created_at=uow.now))
        writer = cls(rt, uow, guild_id, guild_id)
        writer.created.guild = True
        writer.owner_id = owner_id
        await writer._insert_role(guild_id, DEFAULT_ROLE_NAME, 0, 0, int(perms.DEFAULT))
        writer.owner_role = await writer.role(OWNER_ROLE_NAME, color=0, position=1, permissions=int(perms.ALL))
        if owner_joins:
            await writer.add_owner()
        return writer

    async def add_owner(self) -> None:
        await self.members([(self.owner_id, None)])
        await self.member_roles([(self.owner_id, self.owner_role)])

    def switch(self, uow: UnitOfWork) -> None:
        """Continue in another transaction (the caller committed the previous one after a `flush`)."""
        self.uow = uow
        self.conn = uow.conn
        self._ids.conn = uow.conn

    @classmethod
    async def existing(cls, rt: Runtime, uow: UnitOfWork, guild_id: int) -> BatchWriter:
        """A writer adding to a guild that exists (an import `--into`)."""
        return cls(rt, uow, guild_id, guild_id)

    async def _insert_role(self, role_id: int, name: str, color: int, position: int, permissions: int) -> None:
        await self.conn.execute(insert(roles).values(
            id=role_id, guild_id=self.guild_id, name=name, color=color, position=position, permissions=permissions,
            hoist=False, frame_id=None, icon_id=None, is_default=role_id == self.guild_id, created_at=self.uow.now))

    async def role(self, name: str, *, color: int, position: int, permissions: int = 0) -> int:
        role_id = self.uow.next_id()
        await self._insert_role(role_id, name, color, position, permissions)
        self.created.roles.append(role_id)
        return role_id

    async def top_role_position(self) -> int:
        found = (await self.conn.execute(select(func.max(roles.c.position)).where(
            roles.c.guild_id == self.guild_id))).scalar()
        return int(found or 0)

    async def room(self, name: str, *, type_: str = "text", parent_id: int | None = None, position: int = 0,
                   topic: str | None = None) -> int:
        row = channel_row(self.uow, self.guild_id, name=name, type_=type_, topic=topic, position=position,
                          parent_id=parent_id)
        await self.conn.execute(insert(channels).values(row))
        self.created.rooms.append(int(row["id"]))
        return int(row["id"])

    async def set_system_room(self, channel_id: int) -> None:
        await self.conn.execute(update(guilds).where(guilds.c.id == self.guild_id, guilds.c.system_channel_id.is_(None))
                                .values(system_channel_id=channel_id))

    # ---- people ---------------------------------------------------------------------------------------

    async def imported_authors(self, specs: Sequence[AuthorSpec]) -> list[int]:
        """New imported authors (users.imported), in the order given; they are made members too."""
        ids = await author_rows.insert_imported_authors(self.rt, self.uow, specs)
        self.created.users.extend(ids)
        await self.members([(i, None) for i in ids])
        return ids

    async def members(self, pairs: Iterable[tuple[int, str | None]]) -> None:
        """(user id, nickname) pairs; an existing member stays as it is."""
        wanted = dict(pairs)
        if not self.created.guild and wanted:
            held: set[int] = set()
            for chunk in _chunks(list(wanted), _LINK_CHUNK):
                held.update((await self.conn.execute(select(members.c.user_id).where(
                    members.c.guild_id == self.guild_id, members.c.user_id.in_(chunk)))).scalars())
            self.created.members.extend(u for u in wanted if u not in held)
        rows = [{"guild_id": self.guild_id, "user_id": u, "nick": nick, "nick_norm": norm(nick) if nick else None,
                 "joined_at": self.uow.now, "timeout_until": None} for u, nick in wanted.items()]
        for chunk in _chunks(rows, _LINK_CHUNK):
            await self.conn.execute(dialect.insert_ignore(self.conn, members, chunk))

    async def member_roles(self, pairs: Iterable[tuple[int, int]]) -> None:
        rows = [{"guild_id": self.guild_id, "user_id": u, "role_id": r} for u, r in pairs]
        for chunk in _chunks(rows, _LINK_CHUNK):
            await self.conn.execute(dialect.insert_ignore(self.conn, member_roles, chunk))

    # ---- history ----------------------------------------------------------------------------------------

    async def message(self, spec: MessageSpec) -> int:
        message_id = await self._ids.next(spec.created_at)
        row = {
            "id": message_id, "channel_id": spec.channel_id, "guild_id": self.guild_id, "author_id": spec.author_id,
            "webhook_id": None, "webhook_name": None, "webhook_avatar": None, "content": spec.content,
            "content_norm": norm(spec.content), "kind": spec.kind, "recipient_id": None,
            "system_event": spec.system_event, "nonce": None, "reply_to_id": spec.reply_to_id,
            "mentions": [str(m) for m in spec.mentions], "mention_channels": [], "mention_everyone": False,
            "suppress_embeds": False, "pinned": spec.pinned_at is not None, "pinned_at": spec.pinned_at,
            "created_at": spec.created_at, "edited_at": spec.edited_at, "reacted": False, "has_attachments": False,
        }
        self._messages.append(row)
        self._buffered[message_id] = row
        if spec.kind != "system":
            self._mentions.extend({"user_id": m, "channel_id": spec.channel_id, "message_id": message_id}
                                  for m in dict.fromkeys(spec.mentions) if m != spec.author_id)
        self.counts.messages += 1
        self.created.messages.append(message_id)
        self._written[spec.channel_id] = max(message_id, self._written.get(spec.channel_id, 0))
        if len(self._messages) >= BATCH:
            await self.flush()
        return message_id

    def reaction(self, message_id: int, emoji: str, user_id: int, at: datetime) -> None:
        self._reactions.append({"message_id": message_id, "emoji": emoji, "user_id": user_id, "created_at": at})

    def pin(self, message_id: int, at: datetime) -> None:
        row = self._buffered.get(message_id)
        if row is not None:
            row.update(pinned=True, pinned_at=at)
        else:
            self._pins.append({"id": message_id, "at": at})

    async def attach(self, message_id: int, channel_id: int, position: int, path: Path, name: str,
                     uploader_id: int | None) -> str | None:
        """Store a local file as an attachment of the message, checked as an upload is; None when kept, else
        the reason it was refused (`too_large`, `refused_type`)."""
        pending, reason = await local_files.take_local_file(self.rt, path, name, purpose="attachment",
                                                            limit=self.rt.settings.MAX_UPLOAD_SIZE)
        if pending is None:
            return reason
        self.stored_files.append(pending.new.id)
        pending.placement = {"owner": "message", "owner_id": message_id, "message_id": message_id,
                             "position": position, "guild_id": self.guild_id, "channel_id": channel_id,
                             "uploader_id": uploader_id}
        self._files.append(pending)
        self.counts.attachments += 1
        return None

    async def emoji(self, name: str, path: Path, file_name: str) -> tuple[int, str] | None:
        """A custom emoji of the guild from a local image (checked as an emoji upload is): (its id, its name);
        None when refused. The name is made free in the guild with a `_2`, `_3`, ... suffix."""
        limits = await media_limits(self.conn)
        pending, _reason = await local_files.take_local_file(self.rt, path, file_name, purpose="image",
                                                             limit=limits["emoji_max_bytes"])
        if pending is None:
            return None
        self.stored_files.append(pending.new.id)
        emoji_id = self.uow.next_id()
        chosen, suffix = name, 1
        while await emoji_queries.name_taken(self.conn, self.guild_id, norm(chosen), None):
            suffix += 1
            chosen = f"{name[:32 - len(str(suffix)) - 1]}_{suffix}"
        pending.placement = {"owner": "emoji", "owner_id": emoji_id, "guild_id": self.guild_id}
        await local_files.insert_rows(self.uow, [pending])
        await emoji_queries.insert_emoji(self.conn, {
            "id": emoji_id, "guild_id": self.guild_id, "name": chosen, "name_norm": norm(chosen),
            "file_id": pending.new.id, "animated": pending.new.checked.content_type == "image/gif",
            "creator_id": None, "created_at": self.uow.now})
        self.created.emojis.append(emoji_id)
        return emoji_id, chosen

    async def emoji_name(self, emoji_id: int) -> str | None:
        row = await emoji_queries.select_emoji(self.conn, self.guild_id, emoji_id)
        return None if row is None else str(row["name"])

    async def discard_stored(self) -> None:
        """The import's transaction did not commit: remove the content this writer stored."""
        while self.stored_files:
            await self.rt.files.delete(self.stored_files.pop())

    def link(self, kind: str, source_id: str, local_id: int) -> None:
        self._links.append({"guild_id": self.guild_id, "kind": kind, "source_id": source_id, "local_id": local_id})

    async def linked(self, kind: str, source_ids: Iterable[str]) -> dict[str, int]:
        """source id -> local id of what an import into this guild (this one included) wrote before."""
        await self._flush_links()
        wanted = list(dict.fromkeys(source_ids))
        found: dict[str, int] = {}
        for chunk in _chunks(wanted, _LINK_CHUNK):
            rows = await self.conn.execute(select(import_links.c.source_id, import_links.c.local_id).where(
                import_links.c.guild_id == self.guild_id, import_links.c.kind == kind,
                import_links.c.source_id.in_(chunk)))
            found.update({str(s): int(v) for s, v in rows})
        return await self._drop_stale(kind, found)

    async def _drop_stale(self, kind: str, found: dict[str, int]) -> dict[str, int]:
        """Links whose local row was deleted since (a room, role or category removed in the guild) are
        forgotten, so the caller makes the row again instead of pointing at nothing (a FOREIGN KEY error)."""
        table = _LINKED_TABLES.get(kind)
        if table is None or not found:
            return found
        alive: set[int] = set()
        for chunk in _chunks(list(set(found.values())), _LINK_CHUNK):
            alive.update(int(i) for i in (await self.conn.execute(select(table.c.id).where(
                table.c.id.in_(chunk)))).scalars())
        stale = [source for source, local in found.items() if local not in alive]
        for chunk in _chunks(stale, _LINK_CHUNK):
            await self.conn.execute(delete(import_links).where(
                import_links.c.guild_id == self.guild_id, import_links.c.kind == kind,
                import_links.c.source_id.in_(chunk)))
        return {source: local for source, local in found.items() if local in alive}

    # ---- flushing ------------------------------------------------------------------------------------------

    async def flush(self) -> None:
        """Write what is buffered. Order: messages (with their mentions), then what points at them."""
        conn = self.conn
        if self._messages:
            await conn.execute(_MESSAGES, self._messages)
            self._messages, self._buffered = [], {}
        if self._mentions:
            await conn.execute(insert(user_mentions), self._mentions)
            self._mentions = []
        if self._files:
            await local_files.insert_rows(self.uow, self._files)
            self._files = []
        if self._reactions:
            await conn.execute(insert(reactions), self._reactions)
            self.counts.reactions += len(self._reactions)
            self._reactions = []
        for pin in self._pins:
            await conn.execute(update(messages).where(messages.c.id == pin["id"]).values(pinned=True,
                                                                                         pinned_at=pin["at"]))
        self._pins = []
        await self._flush_links()

    async def _flush_links(self) -> None:
        if self._links:
            await self.conn.execute(insert(import_links), self._links)
            self._links = []

    async def finish(self, *, readers: Iterable[int] = ()) -> None:
        """Flush, count the members, and mark what this run wrote read for `readers` (the owner and mapped
        accounts: imported history is not news to them)."""
        await self.flush()
        count = select(func.count()).select_from(members).where(members.c.guild_id == self.guild_id).scalar_subquery()
        await self.conn.execute(update(guilds).where(guilds.c.id == self.guild_id).values(member_count=count))
        await self._mark_read(list(dict.fromkeys(readers)))

    async def _mark_read(self, readers: list[int]) -> None:
        """Only the rooms this run wrote to, up to the newest message it wrote there: a read mark further on
        stays, and so does a mention count (imported mentions were never counted in it, and what it counts is
        not this run's to clear)."""
        if not readers or not self._written:
            return
        held = {(int(u), int(c)): (r, int(n)) for u, c, r, n in (await self.conn.execute(
            select(read_states.c.user_id, read_states.c.channel_id, read_states.c.last_read_message_id,
                   read_states.c.mention_count).where(read_states.c.user_id.in_(readers),
                                                      read_states.c.channel_id.in_(list(self._written))))).all()}
        for user_id in readers:
            for room_id, newest in self._written.items():
                last, mentions = held.get((user_id, room_id), (None, 0))
                await self.conn.execute(dialect.upsert(self.conn, read_states, {
                    "user_id": user_id, "channel_id": room_id, "last_read_message_id": max(newest, last or 0),
                    "mention_count": mentions, "updated_at": self.uow.now}, ["user_id", "channel_id"],
                    ["last_read_message_id", "mention_count", "updated_at"]))


def _chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
