"""The guild side of a Discord import: roles, categories, rooms (threads included), people and custom emojis,
each reused from an earlier import into the same guild (`--into`, through import_links) or written new."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import update

from meadhall.core.limits import EMOJIS_PER_GUILD
from meadhall.db.schema import roles
from meadhall.guilds.emojis import queries as emoji_queries
from meadhall.messages.emoji import custom_token
from meadhall.porting.discord.media import local_path
from meadhall.porting.discord.scan import ChannelInfo, Scan
from meadhall.porting.writer import AuthorSpec, BatchWriter

ROOM_NAME_MAX = 100
_EMOJI_NAME = re.compile(r"[^A-Za-z0-9_]+")


@dataclass
class Built:
    rooms: dict[str, int] = field(default_factory=dict)  # source channel id -> room id
    people: dict[str, int] = field(default_factory=dict)  # source user id -> local user id
    shown: dict[str, str] = field(default_factory=dict)  # source user id -> display name at import
    emojis: dict[str, str] = field(default_factory=dict)  # source emoji id -> reaction key `<:name:id>`
    joining: dict[int, list[int]] = field(default_factory=dict)  # mapped account -> its roles, joined last
    mapped: int = 0
    imported: int = 0


def colour(value: object) -> int:
    text = str(value or "").lstrip("#")
    try:
        return int(text, 16) & 0xFFFFFF if text else 0
    except ValueError:
        return 0


async def build_roles(writer: BatchWriter, scan: Scan, fresh: bool) -> dict[str, int]:
    """Source roles by rank, above the guild's existing ones; a new guild keeps Administrator on top."""
    ordered = sorted(scan.roles.items(), key=lambda item: (int(item[1].get("position") or 0), item[0]))
    linked = await writer.linked("role", [source for source, _ in ordered])
    position = await writer.top_role_position() + (0 if fresh else 1)
    local: dict[str, int] = {}
    for source, role in ordered:
        if source in linked:
            local[source] = linked[source]
            continue
        local[source] = await writer.role(str(role.get("name") or "role")[:100] or "role",
                                          color=colour(role.get("color")), position=position)
        writer.link("role", source, local[source])
        position += 1
    if fresh:
        await writer.conn.execute(update(roles).where(roles.c.guild_id == writer.guild_id,
                                                      roles.c.name == "Administrator").values(position=position))
    return local


def _room_name(name: str) -> str:
    return " ".join(name.split())[:ROOM_NAME_MAX] or "room"


async def build_rooms(writer: BatchWriter, scan: Scan) -> dict[str, int]:
    texts = scan.text_channels()
    linked = await writer.linked("room", list(scan.channels))
    categories = list(dict.fromkeys(c.category for c in texts if c.category))
    linked_categories = await writer.linked("category", categories)
    category_ids: dict[str, int] = {}
    for position, name in enumerate(categories):
        if name in linked_categories:
            category_ids[name] = linked_categories[name]
            continue
        category_ids[name] = await writer.room(_room_name(name), type_="category", position=position)
        writer.link("category", name, category_ids[name])
    rooms: dict[str, int] = {}
    parents = {c.name: c for c in texts}

    async def make(channel: ChannelInfo, name: str, parent: int | None, position: int) -> None:
        if channel.source_id in linked:
            rooms[channel.source_id] = linked[channel.source_id]
            return
        rooms[channel.source_id] = await writer.room(_room_name(name), parent_id=parent, position=position,
                                                     topic=(channel.topic or None) and str(channel.topic)[:1024])
        writer.link("room", channel.source_id, rooms[channel.source_id])

    for position, channel in enumerate(texts):
        await make(channel, channel.name, category_ids.get(channel.category or ""), position)
    for offset, thread in enumerate(scan.threads()):
        parent_name = thread.category or "thread"
        parent = parents.get(parent_name)
        category = category_ids.get(parent.category or "") if parent is not None else None
        await make(thread, f"{parent_name}-{thread.name}", category, len(texts) + offset)
    if texts or rooms:
        first = next(iter(rooms.values()), None)
        if first is not None:
            await writer.set_system_room(first)
    return rooms


async def build_people(writer: BatchWriter, scan: Scan, mapped: dict[str, tuple[int, str]],
                       role_ids: dict[str, int], built: Built) -> None:
    """Mapped accounts (members once `join_mapped` runs) and imported authors (reused when imported here
    before)."""
    linked = await writer.linked("user", [s for s in scan.people if s not in mapped])
    new: list[str] = []
    for source, person in scan.people.items():
        if source in mapped:
            built.people[source], built.shown[source] = mapped[source]
            built.mapped += 1
        elif source in linked:
            built.people[source] = linked[source]
            built.shown[source] = person.nickname or person.name
            built.imported += 1
        else:
            new.append(source)
    specs = [AuthorSpec(scan.people[s].name, scan.people[s].nickname or scan.people[s].name) for s in new]
    for source, user_id in zip(new, await writer.imported_authors(specs), strict=True):
        built.people[source] = user_id
        built.shown[source] = scan.people[source].nickname or scan.people[source].name
        writer.link("user", source, user_id)
        built.imported += 1
    # Imported authors get their roles now; mapped accounts join (with theirs) only in the last transaction
    # (`join_mapped`), so no real account sees the guild while it is half written.
    now: list[tuple[int, int]] = []
    for source, person in scan.people.items():
        local = built.people.get(source)
        if local is None:
            continue
        held = [role_ids[r] for r in sorted(person.roles) if r in role_ids]
        if source in mapped:
            roles_held = built.joining.setdefault(local, [])
            roles_held.extend(r for r in held if r not in roles_held)
        else:
            now.extend((local, r) for r in held)
    await writer.member_roles(now)


async def join_mapped(writer: BatchWriter, built: Built) -> None:
    """The mapped accounts become members with their roles: in the last transaction, with the owner."""
    await writer.members([(user_id, None) for user_id in built.joining])
    await writer.member_roles([(user_id, role_id) for user_id, held in built.joining.items() for role_id in held])


async def build_emojis(writer: BatchWriter, scan: Scan, roots: list[Path], built: Built) -> int:
    """Custom emojis whose image is a local file of the export, up to the guild's limit of EMOJIS_PER_GUILD; the
    others are dropped (their reactions too). Returns how many were dropped."""
    linked = await writer.linked("emoji", list(scan.emojis))
    room = EMOJIS_PER_GUILD - await emoji_queries.count_emojis(writer.conn, writer.guild_id)
    dropped = 0
    for source, emoji in scan.emojis.items():
        name = (_EMOJI_NAME.sub("_", emoji.name).strip("_") or "emoji")[:32].ljust(2, "_")
        local_id = linked.get(source)
        if local_id is None:
            path, _reason = local_path(emoji.image_url, scan.folders[emoji.folder], roots)
            made = None if path is None or room <= 0 else await writer.emoji(name, path, path.name)
            if made is None:
                dropped += 1
                continue
            local_id, name = made
            room -= 1
            writer.link("emoji", source, local_id)
        else:
            name = await writer.emoji_name(local_id) or name
        built.emojis[source] = custom_token(name, local_id)
    return dropped
