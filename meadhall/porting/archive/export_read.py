"""What an export reads, all in the caller's one read transaction (docs/migrating.md, "Between Meadhall
instances"): the guild's structure, its rooms' messages a batch at a time, and public summaries of the users
they name. Every row becomes the JSON of `shapes.py`; a set of references collects the users and files named
along the way, so that exactly those go into `users.json` and `files/`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import (
    channels,
    cosmetics,
    emojis,
    files,
    guild_bans,
    guilds,
    member_roles,
    members,
    messages,
    permission_overrides,
    reactions,
    roles,
    sounds,
    users,
    webhooks,
)

MESSAGE_BATCH = 2000
_IN_CHUNK = 500  # ids per IN (...) list


@dataclass
class References:
    """Users and files the archive names, gathered while its members are written."""

    user_ids: set[int] = field(default_factory=set)
    file_ids: set[int] = field(default_factory=set)
    file_rows: dict[int, dict[str, Any]] = field(default_factory=dict)

    def user(self, value: Any) -> str | None:
        if value is None:
            return None
        self.user_ids.add(int(value))
        return str(value)

    def file(self, value: Any) -> str | None:
        if value is None:
            return None
        self.file_ids.add(int(value))
        return str(value)


def sid(value: Any) -> str | None:
    return None if value is None else str(value)


def ts(value: datetime | None) -> str | None:
    """Full precision with the offset (SQLite hands back naive UTC times)."""
    if value is None:
        return None
    return (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).isoformat()


async def _rows(conn: AsyncConnection, stmt: Select[Any]) -> list[Any]:
    return list((await conn.execute(stmt)).mappings())


def _chunks(ids: Iterable[int]) -> Iterable[list[int]]:
    ordered = sorted(ids)
    for i in range(0, len(ordered), _IN_CHUNK):
        yield ordered[i:i + _IN_CHUNK]


async def select_guild_row(conn: AsyncConnection, guild_id: int) -> Any:
    return (await conn.execute(select(guilds).where(guilds.c.id == guild_id))).mappings().first()


async def select_guild_doc(conn: AsyncConnection, guild: Any, refs: References) -> dict[str, Any]:
    """guild.json, without `files` (known once the messages are read)."""
    gid = guild["id"]
    rooms = await _rows(conn, select(channels).where(channels.c.guild_id == gid)
                        .order_by(channels.c.position, channels.c.id))
    overrides: dict[int, list[dict[str, Any]]] = defaultdict(list)
    room_ids = [r["id"] for r in rooms]
    for chunk in _chunks(room_ids):
        for o in await _rows(conn, select(permission_overrides).where(permission_overrides.c.channel_id.in_(chunk))
                             .order_by(permission_overrides.c.channel_id, permission_overrides.c.target_id)):
            target = refs.user(o["target_id"]) if o["kind"] == "member" else sid(o["target_id"])
            overrides[o["channel_id"]].append({"target_id": target, "kind": o["kind"], "allow": o["allow"],
                                               "deny": o["deny"]})
    room_docs = [_room(r, overrides[r["id"]], refs) for r in rooms]
    return {
        "guild": {"id": str(gid), "name": guild["name"], "description": guild["description"],
                  "icon_file_id": refs.file(guild["icon_file_id"]), "banner_file_id": refs.file(guild["banner_file_id"]),
                  "splash_file_id": refs.file(guild["splash_file_id"]), "owner_id": refs.user(guild["owner_id"]),
                  "system_channel_id": sid(guild["system_channel_id"]), "public": guild["public"],
                  "created_at": ts(guild["created_at"])},
        "roles": [_role(r) for r in await _rows(conn, select(roles).where(roles.c.guild_id == gid)
                                                 .order_by(roles.c.position, roles.c.id))],
        "categories": [d for d in room_docs if d["type"] == "category"],
        "rooms": [d for d in room_docs if d["type"] != "category"],
        "emojis": [{"id": str(e["id"]), "name": e["name"], "file_id": refs.file(e["file_id"]),
                    "animated": e["animated"], "creator_id": refs.user(e["creator_id"]), "created_at": ts(e["created_at"])}
                   for e in await _rows(conn, select(emojis).where(emojis.c.guild_id == gid).order_by(emojis.c.id))],
        "sounds": [{"id": str(s["id"]), "kind": s["kind"], "name": s["name"], "emoji": s["emoji"],
                    "palette_event": s["palette_event"], "file_id": refs.file(s["file_id"]),
                    "duration_ms": s["duration_ms"], "creator_id": refs.user(s["creator_id"]),
                    "created_at": ts(s["created_at"])}
                   for s in await _rows(conn, select(sounds).where(sounds.c.guild_id == gid).order_by(sounds.c.id))],
        "cosmetics": [{"id": str(c["id"]), "kind": c["kind"], "name": c["name"], "file_id": refs.file(c["file_id"]),
                       "created_at": ts(c["created_at"])}
                      for c in await _rows(conn, select(cosmetics).where(cosmetics.c.guild_id == gid)
                                           .order_by(cosmetics.c.id))],
        "members": await _members(conn, gid, refs),
        "bans": [{"user_id": refs.user(b["user_id"]), "reason": b["reason"], "author_id": refs.user(b["author_id"]),
                  "created_at": ts(b["created_at"])}
                 for b in await _rows(conn, select(guild_bans).where(guild_bans.c.guild_id == gid)
                                      .order_by(guild_bans.c.user_id))],
        "pins": await _pins(conn, room_ids),
        "webhooks": [{"id": str(w["id"]), "room_id": str(w["channel_id"]), "name": w["name"],
                      "avatar_file_id": refs.file(w["avatar_file_id"]), "creator_id": refs.user(w["creator_id"]),
                      "created_at": ts(w["created_at"])}
                     for w in await _rows(conn, select(webhooks).where(webhooks.c.guild_id == gid)
                                          .order_by(webhooks.c.id))],
    }


def _room(r: Any, overrides: list[dict[str, Any]], refs: References) -> dict[str, Any]:
    return {"id": str(r["id"]), "type": r["type"], "name": r["name"], "topic": r["topic"], "position": r["position"],
            "parent_id": sid(r["parent_id"]), "slowmode_seconds": r["slowmode_seconds"], "user_limit": r["user_limit"],
            "background_file_id": refs.file(r["background_file_id"]), "created_at": ts(r["created_at"]),
            "overrides": overrides}


def _role(r: Any) -> dict[str, Any]:
    return {"id": str(r["id"]), "name": r["name"], "color": r["color"], "position": r["position"],
            "permissions": r["permissions"], "hoist": r["hoist"], "frame_id": sid(r["frame_id"]),
            "icon_id": sid(r["icon_id"]), "is_default": r["is_default"], "created_at": ts(r["created_at"])}


async def _members(conn: AsyncConnection, gid: int, refs: References) -> list[dict[str, Any]]:
    held: dict[int, list[str]] = defaultdict(list)
    for r in await _rows(conn, select(member_roles.c.user_id, member_roles.c.role_id)
                         .where(member_roles.c.guild_id == gid).order_by(member_roles.c.role_id)):
        held[r["user_id"]].append(str(r["role_id"]))
    return [{"user_id": refs.user(m["user_id"]), "nick": m["nick"], "joined_at": ts(m["joined_at"]),
             "timeout_until": ts(m["timeout_until"]), "role_ids": held[m["user_id"]]}
            for m in await _rows(conn, select(members).where(members.c.guild_id == gid)
                                 .order_by(members.c.joined_at, members.c.user_id))]


async def _pins(conn: AsyncConnection, room_ids: list[int]) -> list[dict[str, Any]]:
    out = []
    for chunk in _chunks(room_ids):
        out += [{"room_id": str(p["channel_id"]), "message_id": str(p["id"]), "pinned_at": ts(p["pinned_at"])}
                for p in await _rows(conn, select(messages.c.id, messages.c.channel_id, messages.c.pinned_at)
                                     .where(messages.c.channel_id.in_(chunk), messages.c.pinned.is_(True))
                                     .order_by(messages.c.channel_id, messages.c.id))]
    return out


_MESSAGE_COLUMNS = [messages.c[name] for name in (
    "id", "author_id", "webhook_id", "webhook_name", "webhook_avatar", "content", "kind", "recipient_id",
    "system_event", "reply_to_id", "mentions", "mention_channels", "mention_everyone", "suppress_embeds", "pinned",
    "pinned_at", "created_at", "edited_at", "reacted", "has_attachments")]


async def message_batches(conn: AsyncConnection, room_id: int, refs: References
                          ) -> AsyncIterator[list[dict[str, Any]]]:
    """The room's messages oldest first (the room's own order, by id), a batch at a time, with their
    reactions and attachments: memory holds one batch, whatever the size of the room."""
    after = 0
    while True:
        batch = await _rows(conn, select(*_MESSAGE_COLUMNS)
                            .where(messages.c.channel_id == room_id, messages.c.id > after)
                            .order_by(messages.c.id).limit(MESSAGE_BATCH))
        if not batch:
            return
        after = batch[-1]["id"]
        reacted = await _reactions(conn, [m["id"] for m in batch if m["reacted"]], refs)
        attached = await _attachments(conn, [m["id"] for m in batch if m["has_attachments"]], refs)
        yield [_message(m, reacted.get(m["id"], []), attached.get(m["id"], []), refs) for m in batch]


async def _reactions(conn: AsyncConnection, ids: list[int], refs: References) -> dict[int, list[dict[str, Any]]]:
    by_message: dict[int, dict[str, list[str]]] = defaultdict(dict)
    for chunk in _chunks(ids):
        for r in await _rows(conn, select(reactions).where(reactions.c.message_id.in_(chunk))
                             .order_by(reactions.c.message_id, reactions.c.created_at, reactions.c.user_id)):
            by_message[r["message_id"]].setdefault(r["emoji"], []).append(refs.user(r["user_id"]) or "")
    return {m: [{"emoji": e, "user_ids": u} for e, u in emo.items()] for m, emo in by_message.items()}


async def _attachments(conn: AsyncConnection, ids: list[int], refs: References) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    for chunk in _chunks(ids):
        for f in await _rows(conn, select(files).where(files.c.message_id.in_(chunk), files.c.owner == "message")
                             .order_by(files.c.message_id, files.c.position)):
            refs.file_rows[f["id"]] = dict(f)
            out[f["message_id"]].append(refs.file(f["id"]) or "")
    return out


def _message(m: Any, reacted: list[dict[str, Any]], attached: list[str], refs: References) -> dict[str, Any]:
    event = m["system_event"]
    if event is not None:
        event = {"type": event.get("type"), "user_id": refs.user(event.get("user_id")),
                 "actor_id": refs.user(event.get("actor_id")), "via": event.get("via")}
    webhook = None if m["webhook_id"] is None else {"id": str(m["webhook_id"]), "name": m["webhook_name"],
                                                      "avatar": m["webhook_avatar"]}
    return {"id": str(m["id"]), "author_id": refs.user(m["author_id"]), "content": m["content"], "kind": m["kind"],
            "system_event": event, "recipient_id": refs.user(m["recipient_id"]), "reply_to_id": sid(m["reply_to_id"]),
            "webhook": webhook, "attachment_ids": attached, "reactions": reacted,
            "mentions": [refs.user(u) for u in m["mentions"] or ()],
            "mention_channels": [str(c) for c in m["mention_channels"] or ()],
            "mention_everyone": m["mention_everyone"], "suppress_embeds": m["suppress_embeds"], "pinned": m["pinned"],
            "pinned_at": ts(m["pinned_at"]), "created_at": ts(m["created_at"]), "edited_at": ts(m["edited_at"])}


async def select_user_summaries(conn: AsyncConnection, ids: set[int], refs: References) -> list[dict[str, Any]]:
    """Public summaries only: the columns are named one by one, so no email, hash, secret or session can
    ever come along."""
    found: dict[int, dict[str, Any]] = {}
    for chunk in _chunks(ids):
        for u in await _rows(conn, select(users.c.id, users.c.username, users.c.display_name,
                                          users.c.avatar_file_id, users.c.bio).where(users.c.id.in_(chunk))):
            found[u["id"]] = {"id": str(u["id"]), "username": u["username"], "display_name": u["display_name"],
                              "avatar_file_id": refs.file(u["avatar_file_id"]), "bio": u["bio"] or ""}
    # An id whose account row is gone still needs a summary, so that every reference resolves.
    return [found.get(i) or {"id": str(i), "username": f"deleted_{i}", "display_name": "Deleted user",
                             "avatar_file_id": None, "bio": ""} for i in sorted(ids)]


async def select_file_rows(conn: AsyncConnection, refs: References) -> list[dict[str, Any]]:
    """The rows of every file named, in id order; a name pointing at no row is dropped from the set."""
    missing = refs.file_ids - refs.file_rows.keys()
    for chunk in _chunks(missing):
        for f in await _rows(conn, select(files).where(files.c.id.in_(chunk))):
            refs.file_rows[f["id"]] = dict(f)
    return [refs.file_rows[i] for i in sorted(refs.file_rows.keys() & refs.file_ids)]


def file_doc(f: dict[str, Any], refs: References) -> dict[str, Any]:
    """The uploader is kept when the archive names them anyway (an attachment's author)."""
    uploader = f["uploader_id"]
    return {"id": str(f["id"]), "purpose": f["purpose"],
            "uploader_id": str(uploader) if uploader in refs.user_ids else None, "original_name": f["original_name"],
            "content_type": f["content_type"], "size": f["size"], "sha256": f["sha256"], "meta": f["meta"] or {},
            "owner": f["owner"] or "", "owner_id": sid(f["owner_id"]), "room_id": sid(f["channel_id"]),
            "position": f["position"], "created_at": ts(f["created_at"])}


async def count_messages(conn: AsyncConnection, room_ids: list[int]) -> int:
    from sqlalchemy import func

    total = 0
    for chunk in _chunks(room_ids):
        total += int((await conn.execute(select(func.count()).select_from(messages)
                                         .where(messages.c.channel_id.in_(chunk)))).scalar_one())
    return total


def drop_missing_files(doc: dict[str, Any], summaries: list[dict[str, Any]], present: set[str]) -> None:
    """A file named by a row but gone from `files` (a holder that outlived its image) is left out, so every
    name in the archive resolves: image slots are emptied, and an emoji, sound or cosmetic without its
    file is not exported."""
    def keep(value: str | None) -> str | None:
        return value if value in present else None

    info = doc["guild"]
    for slot in ("icon_file_id", "banner_file_id", "splash_file_id"):
        info[slot] = keep(info[slot])
    for room in doc["categories"] + doc["rooms"]:
        room["background_file_id"] = keep(room["background_file_id"])
    for hook in doc["webhooks"]:
        hook["avatar_file_id"] = keep(hook["avatar_file_id"])
    for user in summaries:
        user["avatar_file_id"] = keep(user["avatar_file_id"])
    for kind in ("emojis", "sounds", "cosmetics"):
        doc[kind] = [item for item in doc[kind] if item["file_id"] in present]
