"""The new guild's structure from a verified archive (docs/migrating.md, "Between Meadhall instances"): the guild
and its default role, roles, cosmetics, emojis and sounds, categories and rooms with their overrides, people
(mapped accounts and imported authors) with their memberships, nicknames and roles, bans and webhooks. All in
the import's one transaction; files named here get their new ids now and their rows when their content is read.

What the batch writer offers (imported authors, members, held roles) is done through it; the rest is written
here in one statement per table, with every column the archive carries."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam, delete, insert, update

from meadhall.core.text import norm
from meadhall.db.schema import (
    channels,
    cosmetics,
    emojis,
    guild_bans,
    guilds,
    members,
    permission_overrides,
    roles,
    sounds,
    users,
    webhooks,
)
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.structure import channel_row
from meadhall.porting.archive import shapes
from meadhall.porting.archive.idmap import IdMap
from meadhall.porting.writer import AuthorSpec, BatchWriter


async def new_guild(uow: UnitOfWork, doc: shapes.GuildDoc, ids: IdMap, *, owner_id: int, name: str | None) -> int:
    """The guild row and its roles (the default role's id is the guild's, as in every guild)."""
    info = doc.guild
    guild_id = ids.set(info.id, uow.next_id())
    shown = name or info.name
    await uow.conn.execute(insert(guilds).values(
        id=guild_id, name=shown, name_norm=norm(shown), description=info.description,
        icon_file_id=ids.maybe(info.icon_file_id), banner_file_id=ids.maybe(info.banner_file_id),
        splash_file_id=ids.maybe(info.splash_file_id), owner_id=owner_id, member_count=1, system_channel_id=None,
        public=False, public_invite_code=None, is_main=False, created_at=uow.now))
    await uow.conn.execute(insert(roles), [{
        "id": ids.new(r.id), "guild_id": guild_id, "name": r.name, "color": r.color, "position": r.position,
        "permissions": r.permissions, "hoist": r.hoist, "frame_id": ids.maybe(r.frame_id),
        "icon_id": ids.maybe(r.icon_id), "is_default": r.is_default, "created_at": r.created_at} for r in doc.roles])
    return guild_id


async def expressions(uow: UnitOfWork, doc: shapes.GuildDoc, ids: IdMap, guild_id: int) -> None:
    """Cosmetics, emojis and sounds, with their creators (people are mapped before this)."""
    conn = uow.conn
    if doc.cosmetics:
        await conn.execute(insert(cosmetics), [{
            "id": ids.new(c.id), "guild_id": guild_id, "kind": c.kind, "name": c.name, "file_id": ids.new(c.file_id),
            "created_at": c.created_at} for c in doc.cosmetics])
    if doc.emojis:
        await conn.execute(insert(emojis), [{
            "id": ids.new(e.id), "guild_id": guild_id, "name": e.name, "name_norm": norm(e.name),
            "file_id": ids.new(e.file_id), "animated": e.animated, "creator_id": ids.known(e.creator_id),
            "created_at": e.created_at} for e in doc.emojis])
    if doc.sounds:
        await conn.execute(insert(sounds), [{
            "id": ids.new(s.id), "guild_id": guild_id, "kind": s.kind, "name": s.name, "name_norm": norm(s.name),
            "emoji": s.emoji, "palette_event": s.palette_event, "file_id": ids.new(s.file_id),
            "duration_ms": s.duration_ms, "creator_id": ids.known(s.creator_id), "created_at": s.created_at}
            for s in doc.sounds])


async def rooms(uow: UnitOfWork, doc: shapes.GuildDoc, ids: IdMap, guild_id: int) -> None:
    """Categories, then rooms inside them, then every override; the system room as the source had it."""
    rows: list[dict[str, Any]] = []
    for room in doc.categories + doc.rooms:
        row = channel_row(uow, guild_id, name=room.name or "", type_=room.type, topic=room.topic,
                          position=room.position, parent_id=ids.known(room.parent_id),
                          slowmode_seconds=room.slowmode_seconds, user_limit=room.user_limit)
        row.update(name=room.name, background_file_id=ids.maybe(room.background_file_id), created_at=room.created_at)
        ids.set(room.id, row["id"])
        rows.append(row)
    if rows:
        await uow.conn.execute(insert(channels), rows)
    overrides = [{"channel_id": ids.new(room.id), "target_id": ids.new(o.target_id), "kind": o.kind,
                  "allow": o.allow, "deny": o.deny} for room in doc.categories + doc.rooms for o in room.overrides]
    if overrides:
        await uow.conn.execute(insert(permission_overrides), overrides)
    system = ids.known(doc.guild.system_channel_id)
    if system is not None:
        await uow.conn.execute(update(guilds).where(guilds.c.id == guild_id).values(system_channel_id=system))


async def people(writer: BatchWriter, users_doc: shapes.UsersDoc, ids: IdMap, mapped: dict[str, int]) -> int:
    """Mapped accounts take their source user's place; everyone else becomes an imported author with the
    source's public profile (name, display name, bio, avatar). Returns the number of imported authors."""
    newcomers = [u for u in users_doc.users if u.id not in mapped]
    for source, local in mapped.items():
        ids.set(source, local)
    created = await writer.imported_authors([AuthorSpec(u.username, u.display_name) for u in newcomers])
    for user, new_id in zip(newcomers, created, strict=True):
        ids.set(user.id, new_id)
    profiles = [{"uid": ids.new(u.id), "bio": u.bio, "avatar": ids.maybe(u.avatar_file_id)}
                for u in newcomers if u.bio or u.avatar_file_id]
    if profiles:
        await writer.conn.execute(update(users).where(users.c.id == bindparam("uid"))
                                  .values(bio=bindparam("bio"), avatar_file_id=bindparam("avatar")), profiles)
    return len(created)


async def memberships(writer: BatchWriter, doc: shapes.GuildDoc, ids: IdMap, wanted: Callable[[int], bool]) -> None:
    """The source's members whose new account `wanted` says, with their nicknames, join times and roles.
    Imported authors join with the structure; local accounts only in the import's last transaction, so that
    nobody sees the guild before it is whole."""
    chosen = [m for m in doc.members if wanted(ids.new(m.user_id))]
    if not chosen:
        return
    await writer.members([(ids.new(m.user_id), m.nick) for m in chosen])
    await writer.conn.execute(
        update(members).where(members.c.guild_id == writer.guild_id, members.c.user_id == bindparam("uid"))
        .values(nick=bindparam("nick"), nick_norm=bindparam("nick_norm"), joined_at=bindparam("joined"),
                timeout_until=bindparam("until")),
        [{"uid": ids.new(m.user_id), "nick": m.nick, "nick_norm": norm(m.nick) if m.nick else None,
          "joined": m.joined_at, "until": m.timeout_until} for m in chosen])
    await writer.member_roles((ids.new(m.user_id), ids.new(r)) for m in chosen for r in m.role_ids
                              if r != doc.guild.id)


async def bans(writer: BatchWriter, doc: shapes.GuildDoc, ids: IdMap, owner_id: int) -> None:
    """The bans; an imported author the source had banned, and who was no member there, is no member here
    either (imported authors are made members when they are made)."""
    source_members = {m.user_id for m in doc.members}
    outcasts = [u for u in (ids.new(b.user_id) for b in doc.bans if b.user_id not in source_members) if u != owner_id]
    if outcasts:
        await writer.conn.execute(delete(members).where(members.c.guild_id == writer.guild_id,
                                                        members.c.user_id.in_(outcasts)))
    kept = [b for b in doc.bans if ids.new(b.user_id) != owner_id]
    if kept:
        await writer.conn.execute(insert(guild_bans), [{
            "guild_id": writer.guild_id, "user_id": ids.new(b.user_id), "reason": b.reason,
            "author_id": ids.known(b.author_id), "created_at": b.created_at} for b in kept])


async def room_webhooks(uow: UnitOfWork, doc: shapes.GuildDoc, ids: IdMap, guild_id: int, owner_id: int) -> None:
    """Webhooks keep their name, room and avatar but not their token (the archive has none): each gets the
    digest of a token nobody was ever shown, so it executes nothing until an administrator makes a new one."""
    if not doc.webhooks:
        return
    await uow.conn.execute(insert(webhooks), [{
        "id": ids.new(h.id), "guild_id": guild_id, "channel_id": ids.new(h.room_id), "name": h.name,
        "avatar_file_id": ids.maybe(h.avatar_file_id), "creator_id": ids.known(h.creator_id) or owner_id,
        "token_hash": hashlib.sha256(secrets.token_bytes(32)).hexdigest(), "created_at": h.created_at}
        for h in doc.webhooks])
