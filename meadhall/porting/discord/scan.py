"""The first pass over the exports: every file read once as a stream. What the structure needs is kept in
memory (channels, people, roles, custom emojis: a few per author, not per message); the messages themselves go
to a temporary SQLite file beside the system's temporary files, in a compact form, and come back out sorted by
time, so an export written newest first (or split in parts, or several channels) is imported oldest first in
bounded memory: SQLite sorts on disk through its index."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from meadhall.porting.discord.reader import (
    TEXT_TYPES,
    THREAD_TYPES,
    DiscordImportError,
    ExportFile,
    messages,
    read_header,
)

_SPILL_BATCH = 10_000


@dataclass
class Person:
    name: str
    nickname: str | None
    roles: set[str] = field(default_factory=set)


@dataclass
class ChannelInfo:
    source_id: str
    name: str
    type: str
    category: str | None  # for a thread: its parent channel's name
    topic: str | None


@dataclass(frozen=True)
class CustomEmoji:
    name: str
    image_url: str
    animated: bool
    folder: int  # index into Scan.folders: where the image path is relative to


@dataclass(frozen=True)
class Spilled:
    """One message back from the spill, in time order."""

    source_id: str
    channel: str
    folder: int
    at: datetime
    body: dict[str, Any]


class Scan:
    def __init__(self, spill_dir: str | None = None) -> None:
        self.guild: dict[str, Any] | None = None
        self.channels: dict[str, ChannelInfo] = {}
        self.people: dict[str, Person] = {}
        self.roles: dict[str, dict[str, Any]] = {}
        self.emojis: dict[str, CustomEmoji] = {}
        self.folders: list[Path] = []
        self.total = 0
        self._dir = tempfile.TemporaryDirectory(prefix="meadhall-import-", dir=spill_dir)
        self._db = sqlite3.connect(Path(self._dir.name) / "spill.sqlite3")
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE m (ts INTEGER, seq INTEGER, channel TEXT, folder INTEGER, source_id TEXT, "
                         "body BLOB)")
        # Which source message became which local one (this import's and, with --into, the earlier ones'):
        # replies and "already imported" are looked up here, not in the database, whose planner knows
        # nothing yet of a table that grows by a million rows during the import.
        self._db.execute("CREATE TABLE links (source_id TEXT PRIMARY KEY, local_id INTEGER) WITHOUT ROWID")

    def close(self) -> None:
        self._db.close()
        self._dir.cleanup()

    # ---- reading ------------------------------------------------------------------------------------------

    def read(self, files: list[ExportFile], advance: Any = None) -> None:
        for export in files:
            self._take_header(export)
            folder = len(self.folders)
            self.folders.append(export.folder)
            channel = str(export.channel["id"])
            pending: list[tuple[Any, ...]] = []
            for message in messages(export.path):
                pending.append(self._spilled_row(message, channel, folder))
                if len(pending) >= _SPILL_BATCH:
                    self._spill(pending, advance)
                    pending = []
            self._spill(pending, advance)
        self._db.execute("CREATE INDEX m_order ON m (ts, seq)")

    def _spill(self, rows: list[tuple[Any, ...]], advance: Any) -> None:
        self._db.executemany("INSERT INTO m VALUES (?, ?, ?, ?, ?, ?)", rows)
        if advance is not None:
            advance(len(rows))

    def _take_header(self, export: ExportFile) -> None:
        source_guild = export.guild
        if self.guild is None:
            self.guild = source_guild
        elif str(self.guild["id"]) != str(source_guild["id"]):
            raise DiscordImportError("import.mixed_guilds", f"{export.path.name} is from another server "
                                     f"({source_guild.get('name')!r}, not {self.guild.get('name')!r})")
        channel = export.channel
        source_id = str(channel["id"])
        if source_id not in self.channels:
            self.channels[source_id] = ChannelInfo(source_id, str(channel.get("name") or source_id),
                                                   str(channel["type"]), channel.get("category"),
                                                   channel.get("topic"))

    def _person(self, raw: Any, *, author: bool = False) -> str | None:
        if not isinstance(raw, dict) or not raw.get("id"):
            return None
        source_id = str(raw["id"])
        person = self.people.get(source_id)
        if person is None:
            person = self.people[source_id] = Person(str(raw.get("name") or source_id), raw.get("nickname"))
        if author:
            if raw.get("nickname"):
                person.nickname = raw["nickname"]
            for role in raw.get("roles") or ():
                if isinstance(role, dict) and role.get("id"):
                    self.roles.setdefault(str(role["id"]), role)
                    person.roles.add(str(role["id"]))
        return source_id

    def _spilled_row(self, message: dict[str, Any], channel: str, folder: int) -> tuple[Any, ...]:
        self.total += 1
        author = self._person(message.get("author"), author=True)
        mentions = []
        for raw in message.get("mentions") or ():
            mentioned = self._person(raw)
            if mentioned is not None:
                mentions.append([mentioned, raw.get("nickname") or raw.get("name") or "", raw.get("name") or ""])
        reactions = []
        for reaction in message.get("reactions") or ():
            emoji = reaction.get("emoji") or {}
            emoji_id = str(emoji.get("id") or "")
            if emoji_id and emoji_id not in self.emojis:
                self.emojis[emoji_id] = CustomEmoji(str(emoji.get("name") or "emoji"), str(emoji.get("imageUrl") or ""),
                                                    bool(emoji.get("isAnimated")), folder)
            users = [u for u in (self._person(raw) for raw in reaction.get("users") or ()) if u is not None]
            reactions.append([emoji_id, str(emoji.get("name") or ""), users])
        reference = message.get("reference") or {}
        body = {
            "t": str(message.get("type") or "Default"),
            "e": _ms(message.get("timestampEdited")),
            "p": bool(message.get("isPinned")),
            "c": str(message.get("content") or ""),
            "a": author,
            "r": str(reference["messageId"]) if reference.get("messageId") else None,
            "f": [[str(a.get("url") or ""), str(a.get("fileName") or "file")] for a in message.get("attachments") or ()],
            "x": reactions,
            "m": mentions,
            "d": {k: len(message.get(k) or ()) for k in ("embeds", "stickers", "components") if message.get(k)},
        }
        at = _ms(message.get("timestamp"))
        if at is None:
            raise DiscordImportError("import.unsupported", f"message {message.get('id')} has no timestamp")
        return (at, self.total, channel, folder, str(message.get("id")), orjson.dumps(body))

    def remember(self, pairs: list[tuple[str, int]]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO links VALUES (?, ?)", pairs)

    def known(self, source_ids: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for start in range(0, len(source_ids), 500):
            chunk = source_ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self._db.execute(f"SELECT source_id, local_id FROM links WHERE source_id IN ({marks})",  # noqa: S608
                                          chunk).fetchall())
        return found

    # ---- reading back ------------------------------------------------------------------------------------

    def in_time_order(self) -> Iterator[Spilled]:
        rows = self._db.execute("SELECT source_id, channel, folder, ts, body FROM m ORDER BY ts, seq")
        for source_id, channel, folder, ts, body in rows:
            yield Spilled(source_id, channel, folder, from_ms(ts), orjson.loads(body))

    def text_channels(self) -> list[ChannelInfo]:
        return [c for c in self.channels.values() if c.type in TEXT_TYPES]

    def threads(self) -> list[ChannelInfo]:
        return [c for c in self.channels.values() if c.type in THREAD_TYPES]


def _ms(value: Any) -> int | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise DiscordImportError("import.unsupported", f"unreadable timestamp {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def open_files(files: list[tuple[Path, Path]]) -> list[ExportFile]:
    """(file, folder) pairs as `reader.export_files` finds them."""
    return [read_header(path, folder) for path, folder in files]
