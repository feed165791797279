"""The messages of a Discord import, oldest first across every channel (from the scan's spill), written
through the batch writer: content with local mentions (split above 4000 characters), edits, pins, replies
to imported messages, reactions with their users, attachments from the export's own files, `member_join`
system messages, and the count of everything left out by reason."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select

from meadhall.db.schema import messages
from meadhall.db.schema.imports import import_links
from meadhall.porting.discord.content import rewrite_mentions, split_content
from meadhall.porting.discord.media import local_path
from meadhall.porting.discord.scan import Scan, Spilled, from_ms
from meadhall.porting.discord.structure import Built
from meadhall.porting.progress import Bar
from meadhall.porting.writer import BatchWriter, MessageSpec

CHUNK = 2000  # spilled messages per step (and per transaction): one lookup of earlier messages and reply targets
EARLIER_CHUNK = 10_000
WRITTEN_TYPES = {"Default", "Reply"}
JOIN_TEXT = "{name} joined the server."


def _chunks(rows: Iterator[Spilled], size: int) -> Iterator[list[Spilled]]:
    while chunk := list(islice(rows, size)):
        yield chunk


class History:
    def __init__(self, writer: BatchWriter, scan: Scan, built: Built, roots: list[Path]) -> None:
        self.writer = writer
        self.scan = scan
        self.built = built
        self.roots = roots
        self.counts = writer.counts
        self._here: dict[str, int] = {}  # source message id -> local id, within the current chunk

    async def write(self, bar: Bar, checkpoint: Callable[[], Awaitable[None]] | None = None) -> None:
        """`checkpoint` runs after each chunk (the importer commits there)."""
        if not self.writer.created.guild:
            await self._earlier_links()
        for chunk in _chunks(self.scan.in_time_order(), CHUNK):
            known = self.scan.known([m.source_id for m in chunk] + [m.body["r"] for m in chunk if m.body["r"]])
            self._here = {}
            for message in chunk:
                if message.source_id in known or message.source_id in self._here:
                    self.counts.skip("already_imported")
                    continue
                await self._one(message, known)
            self.scan.remember(list(self._here.items()))
            if checkpoint is not None:
                await checkpoint()
            bar.advance(len(chunk))

    async def _earlier_links(self) -> None:
        """The messages an earlier import into this guild wrote and that are still there, copied into the
        scan's lookup table. A message deleted since (its room deleted with it) is written again, into the
        room made anew, and is no reply target (a reply to it would name a row that is gone)."""
        gone = ~select(messages.c.id).where(messages.c.id == import_links.c.local_id).exists()
        await self.writer.conn.execute(delete(import_links).where(
            import_links.c.guild_id == self.writer.guild_id, import_links.c.kind == "message", gone))
        after = ""
        while True:
            rows = (await self.writer.conn.execute(
                select(import_links.c.source_id, import_links.c.local_id)
                .where(import_links.c.guild_id == self.writer.guild_id, import_links.c.kind == "message",
                       import_links.c.source_id > after)
                .order_by(import_links.c.source_id).limit(EARLIER_CHUNK))).all()
            if not rows:
                return
            self.scan.remember([(str(s), int(v)) for s, v in rows])
            after = str(rows[-1][0])

    def _target(self, source_id: str | None, known: dict[str, int]) -> int | None:
        if not source_id:
            return None
        return self._here.get(source_id) or known.get(source_id)

    async def _one(self, message: Spilled, known: dict[str, int]) -> None:
        body = message.body
        room = self.built.rooms.get(message.channel)
        if room is None:
            self.counts.skip("unsupported_channel")
            return
        for reason, count in body["d"].items():
            self.counts.skip(reason, count)
        kind = body["t"]
        if kind == "ChannelPinnedMessage":
            target = self._target(body["r"], known)
            if target is None:
                self.counts.skip("pin_target_missing")
            else:
                self.writer.pin(target, message.at)
            return
        author = self.built.people.get(body["a"] or "")
        if kind == "GuildMemberJoin" and author is not None:
            await self._joined(message, room, author)
            return
        if kind not in WRITTEN_TYPES:
            self.counts.skip("unsupported_type")
            return
        if author is None:
            self.counts.skip("no_author")
            return
        await self._default(message, room, author, known)

    async def _joined(self, message: Spilled, room: int, author: int) -> None:
        content = JOIN_TEXT.format(name=self.built.shown.get(message.body["a"], "Someone"))
        local = await self.writer.message(MessageSpec(
            room, None, content, message.at, kind="system",
            system_event={"type": "member_join", "user_id": str(author), "actor_id": None, "via": "invite"}))
        self._remember(message.source_id, local)

    def _remember(self, source_id: str, local: int) -> None:
        self._here[source_id] = local
        self.writer.link("message", source_id, local)

    async def _default(self, message: Spilled, room: int, author: int, known: dict[str, int]) -> None:
        body = message.body
        labelled = [(source, label) for source, nickname, name in body["m"] for label in {nickname, name} if label]
        content, named = rewrite_mentions(body["c"], labelled, self.built.people)
        files = self._files(body["f"], message.folder)
        if not content.strip() and not files:
            self.counts.skip("empty")
            return
        edited = from_ms(body["e"]) if body["e"] else None
        reply = self._target(body["r"], known) if body["t"] == "Reply" else None
        if body["t"] == "Reply" and body["r"] and reply is None:
            self.counts.skip("reply_target_missing")
        first: int | None = None
        for part in split_content(content):
            local = await self.writer.message(MessageSpec(
                room, author, part, message.at, edited_at=edited, reply_to_id=reply if first is None else None,
                pinned_at=message.at if body["p"] and first is None else None, mentions=named))
            first = first if first is not None else local
        assert first is not None
        self._remember(message.source_id, first)
        for position, (path, name) in enumerate(files):
            refused = await self.writer.attach(first, room, position, path, name, author)
            if refused is not None:
                self.counts.skip(f"attachment_{refused}")
        self._reactions(first, body["x"], message.at)

    def _files(self, attachments: list[list[str]], folder: int) -> list[tuple[Path, str]]:
        kept: list[tuple[Path, str]] = []
        for url, name in attachments:
            path, reason = local_path(url, self.scan.folders[folder], self.roots)
            if path is None:
                self.counts.skip(f"attachment_{reason}")
            else:
                kept.append((path, name))
        return kept

    def _reactions(self, message_id: int, reactions: list[Any], at: datetime) -> None:
        # Several source users mapped to one account (`--map-users`) react once: a reaction is unique per
        # (message, emoji, user).
        seen: set[tuple[str, int]] = set()
        for emoji_id, name, users in reactions:
            key = self.built.emojis.get(emoji_id) if emoji_id else name
            if not key:
                self.counts.skip("reaction_custom_emoji")
                continue
            for user in users:
                local = self.built.people.get(user)
                if local is not None and (key, local) not in seen:
                    seen.add((key, local))
                    self.writer.reaction(message_id, key, local, at)
