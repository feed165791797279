"""The transactions of an import committed in batches (docs/migrating.md, "Safety"), and what undoes it.

A whole import in one transaction would be the simplest guarantee, but PostgreSQL makes it quadratic: the
triggers on `messages` update the room's row once per message, and within one transaction every update adds a
version of that row that the next update must walk past (100,000 messages took minutes). So an import commits
every few thousand messages, and when it fails, `undo` removes what it committed: the new guild with
everything in it and its imported authors, or, for an import into an existing guild, exactly the rows it added
(messages, links, rooms, roles, emojis, authors, memberships). A new guild gets its owner only in the last
transaction, so nobody sees it half-written; a process killed outright leaves such an ownerless, memberless
guild behind (docs/migrating.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from sqlalchemy import delete, func, select, update

from meadhall.db.schema import channels, emojis, files, guilds, members, messages, roles, users
from meadhall.db.schema.imports import import_links
from meadhall.db.uow import UnitOfWork
from meadhall.porting.writer import BatchWriter
from meadhall.runtime import Runtime

_DELETE_CHUNK = 2000  # messages per undo transaction (their delete triggers are per row too)


class Batches:
    """One transaction open at a time: `begin`, then `next` (commit and open another), `commit` or `abort`."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._open: AbstractAsyncContextManager[Any] | None = None
        self.uow: UnitOfWork | None = None

    async def begin(self) -> UnitOfWork:
        self._open = self.rt.uow()
        self.uow = await self._open.__aenter__()
        return self.uow

    async def commit(self) -> None:
        assert self._open is not None and self.uow is not None
        self.uow.events = []  # nothing of an import is announced: the guild appears in READY
        opened, self._open, self.uow = self._open, None, None
        await opened.__aexit__(None, None, None)

    async def next(self) -> UnitOfWork:
        await self.commit()
        return await self.begin()

    async def abort(self, error: BaseException) -> None:
        if self._open is not None:
            opened, self._open, self.uow = self._open, None, None
            try:
                await opened.__aexit__(type(error), error, error.__traceback__)
            except BaseException:  # noqa: S110 - the rollback re-raises the error being handled
                pass


def _chunks(items: Sequence[int], size: int) -> list[list[int]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


async def undo(rt: Runtime, writer: BatchWriter) -> None:
    """Remove what the writer's committed batches wrote."""
    made = writer.created
    guild_id = writer.guild_id
    if made.guild:
        while True:  # the messages first, in small transactions, then the guild cascades the rest
            async with rt.uow() as uow:
                room_ids = select(channels.c.id).where(channels.c.guild_id == guild_id).scalar_subquery()
                batch = select(messages.c.id).where(messages.c.channel_id.in_(room_ids)).limit(_DELETE_CHUNK)
                gone = (await uow.conn.execute(delete(messages).where(messages.c.id.in_(batch)))).rowcount
            if not gone:
                break
        async with rt.uow() as uow:
            await uow.conn.execute(delete(files).where(files.c.guild_id == guild_id))
            await uow.conn.execute(delete(guilds).where(guilds.c.id == guild_id))
            for chunk in _chunks(made.users, _DELETE_CHUNK):
                await uow.conn.execute(delete(users).where(users.c.id.in_(chunk), users.c.imported.is_(True)))
        return
    for chunk in _chunks(made.messages, _DELETE_CHUNK):
        async with rt.uow() as uow:
            await uow.conn.execute(delete(files).where(files.c.message_id.in_(chunk)))
            await uow.conn.execute(delete(messages).where(messages.c.id.in_(chunk)))
            await uow.conn.execute(delete(import_links).where(import_links.c.guild_id == guild_id,
                                                              import_links.c.local_id.in_(chunk)))
    async with rt.uow() as uow:
        conn = uow.conn
        # The rooms' newest message as it was (the insert trigger moved it; deletes leave it).
        newest = select(func.max(messages.c.id)).where(messages.c.channel_id == channels.c.id,
                                                       messages.c.kind != "private").scalar_subquery()
        await conn.execute(update(channels).where(channels.c.guild_id == guild_id).values(last_message_id=newest))
        made_ids = [*made.rooms, *made.roles, *made.emojis, *made.users]
        for chunk in _chunks(made_ids, _DELETE_CHUNK):
            await conn.execute(delete(import_links).where(import_links.c.guild_id == guild_id,
                                                          import_links.c.local_id.in_(chunk)))
        for chunk in _chunks(made.emojis, _DELETE_CHUNK):
            await conn.execute(delete(files).where(files.c.owner == "emoji", files.c.owner_id.in_(chunk)))
            await conn.execute(delete(emojis).where(emojis.c.guild_id == guild_id, emojis.c.id.in_(chunk)))
        for chunk in _chunks(made.rooms, _DELETE_CHUNK):
            await conn.execute(delete(channels).where(channels.c.guild_id == guild_id, channels.c.id.in_(chunk)))
        for chunk in _chunks(made.roles, _DELETE_CHUNK):
            await conn.execute(delete(roles).where(roles.c.guild_id == guild_id, roles.c.id.in_(chunk)))
        for chunk in _chunks(made.members, _DELETE_CHUNK):
            await conn.execute(delete(members).where(members.c.guild_id == guild_id, members.c.user_id.in_(chunk)))
        for chunk in _chunks(made.users, _DELETE_CHUNK):
            await conn.execute(delete(users).where(users.c.id.in_(chunk), users.c.imported.is_(True)))
