"""Exports as DiscordChatExporter writes them (its JSON format: guild, channel, dateRange, exportedAt, messages,
messageCount), for the import tests and the import benchmark. Small exports are built message by message
(`Channel.say`); large ones are streamed to disk by `write_large_export` without holding them in memory."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.files import png

DISCORD_EPOCH_MS = 1_420_070_400_000


def snowflake(at: datetime, seq: int = 0) -> str:
    return str(((int(at.timestamp() * 1000) - DISCORD_EPOCH_MS) << 22) | (seq & 0x3FFFFF))


def stamp(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds")


def role(role_id: str, name: str, color: str | None = "#3498DB", position: int = 1) -> dict[str, Any]:
    return {"id": role_id, "name": name, "color": color, "position": position}


def user(user_id: str, name: str, nickname: str | None = None, roles: list[dict[str, Any]] | None = None,
         *, bot: bool = False) -> dict[str, Any]:
    return {"id": user_id, "name": name, "discriminator": "0000", "nickname": nickname or name,
            "color": None, "isBot": bot, "roles": roles or [], "avatarUrl": f"https://cdn.example.invalid/{user_id}.png"}


def short(person: dict[str, Any]) -> dict[str, Any]:
    """A user as listed in `mentions` and reaction `users`."""
    return {k: person[k] for k in ("id", "name", "discriminator", "nickname", "isBot", "avatarUrl")}


@dataclass
class Channel:
    channel_id: str
    name: str
    type: str = "GuildTextChat"
    category: str | None = "Text Channels"
    category_id: str | None = "900"
    topic: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    clock: datetime = field(default_factory=lambda: datetime(2022, 3, 1, 12, 0, tzinfo=UTC))
    seq: int = 0

    def say(self, author: dict[str, Any], content: str = "", *, type_: str = "Default", after: float = 60.0,
            **extra: Any) -> dict[str, Any]:
        """A message `after` seconds after the previous one; `extra` sets any other field."""
        self.clock += timedelta(seconds=after)
        self.seq += 1
        message: dict[str, Any] = {
            "id": snowflake(self.clock, int(self.channel_id) * 1000 + self.seq), "type": type_, "timestamp": stamp(self.clock),
            "timestampEdited": None, "callEndedTimestamp": None, "isPinned": False, "content": content,
            "author": author, "attachments": [], "embeds": [], "stickers": [], "reactions": [], "mentions": [],
            "inlineEmojis": [],
        }
        message.update(extra)
        self.messages.append(message)
        return message

    def header(self, guild: dict[str, Any]) -> dict[str, Any]:
        return {
            "guild": guild,
            "channel": {"id": self.channel_id, "type": self.type, "categoryId": self.category_id,
                        "category": self.category, "name": self.name, "topic": self.topic},
            "dateRange": {"after": None, "before": None},
            "exportedAt": stamp(datetime(2024, 6, 1, tzinfo=UTC)),
        }

    def write(self, path: Path, guild: dict[str, Any], *, newest_first: bool = False,
              parts: int = 1) -> list[Path]:
        """The channel as DCE writes it: one file, or `parts` files (`[part 2]` ...) of consecutive messages."""
        ordered = list(reversed(self.messages)) if newest_first else list(self.messages)
        size = max(1, -(-len(ordered) // parts))
        written = []
        for index in range(parts):
            chunk = ordered[index * size:(index + 1) * size]
            target = path if index == 0 else path.with_name(f"{path.stem} [part {index + 1}]{path.suffix}")
            body = {**self.header(guild), "messages": chunk, "messageCount": len(chunk)}
            target.write_text(json.dumps(body, indent=2, ensure_ascii=False), encoding="utf-8")
            written.append(target)
        return written


def guild(guild_id: str = "111", name: str = "Old Hall") -> dict[str, Any]:
    return {"id": guild_id, "name": name, "iconUrl": "https://cdn.example.invalid/icon.png"}


# ---- large exports, streamed --------------------------------------------------------------------------------

WORDS = ("the hall is warm tonight and the mead flows freely while skalds sing of old deeds "
         "someone asked about the raid schedule again please read the pinned notes before asking").split()


def write_large_export(folder: Path, messages: int, *, channels: int = 4, users: int = 200, seed: int = 7,
                       newest_first: bool = False) -> list[Path]:
    """`messages` messages spread over `channels` channel files (one folder), realistic in shape: replies,
    reactions with users, mentions, edits, pins, roles; no media. Written message by message."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    roles = [role(str(500 + i), f"Rank {i}", f"#{rng.randrange(0x1000000):06X}", i + 1) for i in range(5)]
    people = [user(str(10_000 + i), f"member{i}", f"Member {i}", [roles[i % 5]]) for i in range(users)]
    per_channel = -(-messages // channels)
    start = datetime(2023, 1, 1, tzinfo=UTC)
    paths = []
    for c in range(channels):
        count = min(per_channel, messages - c * per_channel)
        if count <= 0:
            break
        channel = Channel(str(2000 + c), f"room-{c}")
        path = folder / f"Old Hall - Text Channels - room-{c} [{2000 + c}].json"
        head = json.dumps(channel.header(guild()), ensure_ascii=False)[:-1]
        step = timedelta(seconds=max(1.0, 365 * 86400 / max(count, 1)))
        indices = range(count - 1, -1, -1) if newest_first else range(count)
        with path.open("w", encoding="utf-8") as out:
            out.write(head + ', "messages": [\n')
            for n, i in enumerate(indices):
                at = start + step * i
                author = people[rng.randrange(users)]
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3, 25)))
                message: dict[str, Any] = {
                    "id": snowflake(at, c), "type": "Default", "timestamp": stamp(at),
                    "timestampEdited": stamp(at + timedelta(minutes=3)) if i % 17 == 0 else None,
                    "callEndedTimestamp": None, "isPinned": i % 997 == 0, "content": text, "author": author,
                    "attachments": [], "embeds": [], "stickers": [], "reactions": [], "mentions": [],
                    "inlineEmojis": [],
                }
                if i % 5 == 0 and i > 0:
                    message["type"] = "Reply"
                    message["reference"] = {"messageId": snowflake(start + step * (i - 1), c),
                                            "channelId": channel.channel_id, "guildId": "111"}
                if i % 7 == 0:
                    reactors = [short(people[rng.randrange(users)]) for _ in range(3)]
                    reactors = list({r["id"]: r for r in reactors}.values())
                    message["reactions"] = [{"emoji": {"id": "", "name": "👍", "code": "thumbsup", "isAnimated": False,
                                                       "imageUrl": ""}, "count": len(reactors), "users": reactors}]
                if i % 11 == 0:
                    named = people[rng.randrange(users)]
                    message["content"] += f" @{named['nickname']}"
                    message["mentions"] = [short(named)]
                out.write(("" if n == 0 else ",\n") + json.dumps(message, ensure_ascii=False))
            out.write(f'\n], "messageCount": {count}}}\n')
        paths.append(path)
    return paths


# ---- the hall: a small export using every clause of the import --------------------------------------------

LONG_TEXT = ("word " * 1000).strip()  # 4999 characters: two messages here
EMOJI_PNG = png(8, 8)


@dataclass
class Hall:
    folder: Path
    files: list[Path]
    people: dict[str, dict[str, Any]]
    roles: dict[str, dict[str, Any]]
    channels: dict[str, Channel]
    said: dict[str, dict[str, Any]]  # label -> source message


def hall_export(folder: Path, canary_url: str, *, guild_id: str = "111") -> Hall:
    """Old Hall: `general` (written newest first, in two parts) with a thread, `news`, a thread whose parent
    is not exported; replies, mentions (by name and raw), a pin notice, a join, a thread notice (skipped), a
    5,000-character message, reactions (Unicode; a custom emoji with its image in the export, one without),
    attachments (one local file, `../outside.txt`, `/etc/passwd`, a URL at `canary_url`, a missing file),
    an embed and a sticker."""
    folder.mkdir(parents=True, exist_ok=True)
    media = folder / "general.json_Files"
    media.mkdir()
    (media / "notes-1.txt").write_bytes(b"the raid is on thursday\n")
    (media / "hallmark-7001.png").write_bytes(EMOJI_PNG)
    (folder.parent / "outside.txt").write_text("not part of the export")
    roles = {"elder": role("501", "Elder", "#E74C3C", 3), "skald": role("502", "Skald", "#3498DB", 2)}
    people = {
        "ann": user("201", "ann", "Ann the Bold", [roles["elder"]]),
        "bjorn": user("202", "bjørn", "Bjørn", [roles["skald"]]),
        "cara": user("203", "cara", None),
        "dave": user("204", "dave", "Dave"),
        "eve": user("205", "eve", "Eve"),
    }
    ann, bjorn, cara = people["ann"], people["bjorn"], people["cara"]
    general = Channel("301", "general", topic="Talk of the hall")
    news = Channel("302", "news", type="GuildNews", category="Announcements", category_id="901")
    thread = Channel("303", "raid-plans", type="GuildPublicThread", category="general", category_id="301")
    lost = Channel("304", "old-thread", type="GuildPublicThread", category="lost-channel", category_id="399")
    said: dict[str, dict[str, Any]] = {}
    said["welcome"] = general.say(ann, "Welcome to the hall", isPinned=True,
                                  timestampEdited="2022-03-01T12:05:00.000+00:00")
    said["thanks"] = general.say(bjorn, "Thanks @Ann the Bold!", type_="Reply",
                                 reference={"messageId": said["welcome"]["id"], "channelId": "301", "guildId": guild_id},
                                 mentions=[short(ann)])
    said["raw"] = general.say(cara, "ping <@204> about the mead", mentions=[short(people["dave"])])
    said["join"] = general.say(cara, "", type_="GuildMemberJoin")
    said["pin_notice"] = general.say(ann, "", type_="ChannelPinnedMessage",
                                     reference={"messageId": said["raw"]["id"], "channelId": "301", "guildId": guild_id})
    said["thread_notice"] = general.say(ann, "raid-plans", type_="ThreadCreated")
    said["long"] = general.say(bjorn, LONG_TEXT)
    said["reacted"] = general.say(ann, "Vote here", reactions=[
        {"emoji": {"id": "", "name": "👍", "code": "thumbsup", "isAnimated": False, "imageUrl": ""}, "count": 2,
         "users": [short(bjorn), short(people["eve"])]},
        {"emoji": {"id": "7001", "name": "hallmark", "code": "hallmark", "isAnimated": False,
                   "imageUrl": "general.json_Files/hallmark-7001.png"}, "count": 1, "users": [short(cara)]},
        {"emoji": {"id": "7002", "name": "gone", "code": "gone", "isAnimated": False,
                   "imageUrl": f"{canary_url}/emoji.png"}, "count": 1, "users": [short(cara)]},
    ])
    said["files"] = general.say(ann, "Files for the raid", attachments=[
        {"id": "1", "url": "general.json_Files/notes-1.txt", "fileName": "notes.txt", "fileSizeBytes": 24},
        {"id": "2", "url": "../outside.txt", "fileName": "outside.txt", "fileSizeBytes": 22},
        {"id": "3", "url": "/etc/passwd", "fileName": "passwd", "fileSizeBytes": 1},
        {"id": "4", "url": f"{canary_url}/remote.png", "fileName": "remote.png", "fileSizeBytes": 1},
        {"id": "5", "url": "general.json_Files/missing.png", "fileName": "missing.png", "fileSizeBytes": 1},
    ], embeds=[{"title": "a link"}], stickers=[{"id": "9", "name": "wave", "format": "Png"}])
    said["orphan_reply"] = general.say(cara, "an answer to something not exported", type_="Reply",
                                       reference={"messageId": "999", "channelId": "301", "guildId": guild_id})
    said["news"] = news.say(ann, "The hall opens at dusk")
    said["plan"] = thread.say(bjorn, "Plan: meet at the gate")
    said["lost"] = lost.say(cara, "A thread of a channel not exported")
    g = {"id": guild_id, "name": "Old Hall", "iconUrl": f"{canary_url}/icon.png"}
    files = [*general.write(folder / "general.json", g, newest_first=True, parts=2),
             *news.write(folder / "news.json", g), *thread.write(folder / "raid-plans.json", g),
             *lost.write(folder / "old-thread.json", g)]
    return Hall(folder, files, people, roles, {"general": general, "news": news, "thread": thread, "lost": lost},
                said)


def import_command(settings: Any) -> Any:
    """`meadhall ...` in-process on the test's database and data directory (tests/support/cli_runs.py)."""
    from tests.support.cli_runs import cli_runner

    return cli_runner(settings)


# ---- failing part-way: enough history for committed batches, and a file store that refuses -------------

def filler(channel: Channel, author: dict[str, Any], count: int) -> None:
    """Enough messages before the last one that the import has committed batches when it reaches it."""
    for i in range(count):
        channel.say(author, f"filler {i}", after=1.0)


def long_export_ending_with_a_file(folder: Path) -> None:
    """One channel whose last message, past two checkpoints (2,000 messages each), carries an attachment: with the
    file store broken, the import fails there after committed batches."""
    folder.mkdir()
    general = Channel("301", "general")
    ann = user("201", "ann")
    filler(general, ann, 4500)
    (folder / "general.json_Files").mkdir()
    (folder / "general.json_Files" / "a.txt").write_text("an attachment")
    general.say(ann, "with a file", attachments=[{"id": "1", "url": "general.json_Files/a.txt", "fileName": "a.txt",
                                                  "fileSizeBytes": 13}])
    general.write(folder / "general.json", guild())


def break_file_store(settings: Any) -> Path:
    """A file where the file store's folder was: storing any content now fails (even for root)."""
    root = Path(settings.DATA_DIR) / "files"
    aside = root.with_name("files-aside")
    if root.exists():
        root.rename(aside)
    root.parent.mkdir(parents=True, exist_ok=True)
    root.write_text("not a folder")
    return aside


def repair_file_store(settings: Any, aside: Path) -> None:
    root = Path(settings.DATA_DIR) / "files"
    root.unlink()
    if aside.exists():
        aside.rename(root)
