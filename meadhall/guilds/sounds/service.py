"""Sounds of a guild: list, upload, update, delete (OpenAPI: listSounds, createSound, updateSound,
deleteSound; docs/customisation.md), and the lookup the soundboard's play route makes.

Two kinds: `soundboard` sounds are played in voice rooms; `interface` sounds replace one of the client's
interface sounds (`palette_event`, required for them and refused for soundboard sounds; one sound per
event and guild). At most `SOUNDBOARD_SOUNDS_PER_GUILD` + `INTERFACE_SOUNDS_PER_GUILD`; names are unique
per guild and kind, ignoring case.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.audit.diff import changes
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, validation_error
from meadhall.core.ids import parse_id
from meadhall.core.limits import INTERFACE_SOUNDS_PER_GUILD, SOUNDBOARD_SOUNDS_PER_GUILD
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.files import queries as file_queries
from meadhall.files.cleanup import drop_files
from meadhall.files.intake import kept_until_commit
from meadhall.files.upload import OpenUpload
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import GuildContext, access_guild, require
from meadhall.guilds.emojis import queries as emoji_queries
from meadhall.guilds.sounds import queries
from meadhall.guilds.sounds.checks import check_sound, sound_type_allowed
from meadhall.guilds.sounds.events import notify_sounds_update
from meadhall.guilds.sounds.queries import SoundRow
from meadhall.guilds.sounds.schemas import PALETTE_EVENTS, SOUND_KINDS
from meadhall.guilds.sounds.views import sound_view
from meadhall.guilds.uploads import choice_field, receive_item, text_field
from meadhall.realtime.audience import guild_members
from meadhall.runtime import Runtime

P = perms.P
FILE_OWNER = "sound"
PER_KIND = {"soundboard": SOUNDBOARD_SOUNDS_PER_GUILD, "interface": INTERFACE_SOUNDS_PER_GUILD}
CUSTOM_EMOJI = re.compile(r"<:[A-Za-z0-9_]{2,32}:([0-9]{1,19})>")


async def _sound(conn: AsyncConnection, guild_id: int, raw_id: str | int) -> SoundRow:
    sound_id = parse_id(raw_id)
    row = None if sound_id is None else await queries.select_sound(conn, guild_id, sound_id)
    if row is None:
        raise AppError("sound.not_found")
    return row


async def soundboard_sound(conn: AsyncConnection, guild_id: int, raw_sound_id: str | int) -> SoundRow:
    """The soundboard sound to play (OpenAPI: playSound): 404 `sound.not_found` when the guild has no such
    sound, 422 (field `sound_id`) for an interface sound."""
    row = await _sound(conn, guild_id, raw_sound_id)
    if row["kind"] != "soundboard":
        raise validation_error("sound_id", "interface sounds are not played on the soundboard")
    return row


def _palette_rule(kind: str, palette_event: str | None) -> None:
    if kind == "interface" and palette_event is None:
        raise validation_error("palette_event", "is required for interface sounds")
    if kind == "soundboard" and palette_event is not None:
        raise validation_error("palette_event", "is only for interface sounds")


async def check_sound_emoji(conn: AsyncConnection, guild_id: int, value: str) -> str:
    """A sound's `emoji`: one Unicode emoji (the emoji package's list, kept to Unicode's), or the `<:name:id>`
    token of a custom emoji of this guild, stored with the emoji's current name; anything else 422."""
    # Imported here, not at the top: the package's tables take about 7 MB, which every node would otherwise
    # hold from start for a check that only runs when a sound is uploaded or renamed.
    import emoji as unicode_emoji

    if unicode_emoji.is_emoji(value):
        return value
    match = CUSTOM_EMOJI.fullmatch(value)
    emoji_id = None if match is None else parse_id(match.group(1))
    row = None if emoji_id is None else await emoji_queries.select_emoji(conn, guild_id, emoji_id)
    if row is None:
        raise validation_error("emoji", "must be one Unicode emoji or the <:name:id> token of a custom emoji "
                                        "of this server")
    return f"<:{row['name']}:{row['id']}>"


async def _check_free(uow: UnitOfWork, guild_id: int, kind: str, name: str | None, palette_event: str | None,
                      except_id: int | None = None) -> None:
    if name is not None and await queries.name_taken(uow.conn, guild_id, kind, norm(name), except_id):
        raise AppError("sound.name_taken")
    if palette_event is not None and await queries.palette_event_taken(uow.conn, guild_id, palette_event, except_id):
        raise AppError("sound.palette_event_taken")


async def _announce(uow: UnitOfWork, guild_id: int) -> None:
    rows = await queries.select_sounds(uow.conn, guild_id)
    uow.emit(notify_sounds_update(guild_id, rows, await guild_members(uow.conn, guild_id)))


async def access_sounds(rt: Runtime, principal: Principal, raw_guild_id: str, kind: str | None) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        rows = await queries.select_sounds(uow.conn, gc.guild_id, kind)
    return {"sounds": [sound_view(r) for r in rows]}


def _fields(fields: dict[str, str]) -> tuple[str, str, str | None, str | None]:
    kind = choice_field(fields, "kind", SOUND_KINDS)
    name = text_field(fields, "name", min_length=2, max_length=32)
    emoji = text_field(fields, "emoji", min_length=1, max_length=64, required=False)
    palette_event = choice_field(fields, "palette_event", PALETTE_EVENTS, required=False)
    assert kind is not None and name is not None
    _palette_rule(kind, palette_event)
    return kind, name, emoji, palette_event


async def do_create_sound(rt: Runtime, principal: Principal, raw_guild_id: str, upload: OpenUpload
                          ) -> dict[str, Any]:
    """MANAGE_SOUNDS; the sound (413 / 415), the fields (422), then the count of its kind, the name and the
    palette event (409)."""
    incoming = await receive_item(rt, principal, raw_guild_id, P.MANAGE_SOUNDS, upload, limit="sound_max_bytes",
                                  purpose="banner", check=check_sound, accept=sound_type_allowed)
    new = incoming.new
    async with kept_until_commit(rt, new), rt.uow() as uow:
        kind, name, emoji, palette_event = _fields(incoming.fields)
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        require(gc, P.MANAGE_SOUNDS)
        if emoji is not None:
            emoji = await check_sound_emoji(uow.conn, gc.guild_id, emoji)
        # Concurrent uploads would both pass the count and the uniqueness checks (PostgreSQL).
        await guild_queries.lock_guild(uow.conn, gc.guild_id)
        if await queries.count_sounds(uow.conn, gc.guild_id, kind) >= PER_KIND[kind]:
            raise AppError("sound.limit_reached", f"At most {PER_KIND[kind]} {kind} sounds per server")
        await _check_free(uow, gc.guild_id, kind, name, palette_event)
        sound_id = uow.next_id()
        await file_queries.insert_file(uow.conn, new.row(uow.now, owner=FILE_OWNER, owner_id=sound_id,
                                                         guild_id=gc.guild_id))
        duration = new.checked.meta.get("duration_ms")
        row: SoundRow = {"id": sound_id, "guild_id": gc.guild_id, "kind": kind, "name": name, "name_norm": norm(name),
                         "emoji": emoji, "palette_event": palette_event, "file_id": new.id,
                         "duration_ms": duration if isinstance(duration, int) else None,
                         "creator_id": principal.user_id, "created_at": uow.now}
        await queries.insert_sound(uow.conn, row)
        await record(uow, "sound.create", actor_id=principal.user_id, target_type="sound", target_id=sound_id,
                     guild_id=gc.guild_id, data={"name": name, "kind": kind, "palette_event": palette_event})
        await _announce(uow, gc.guild_id)
    return {"sound": sound_view(row)}


async def do_update_sound(rt: Runtime, principal: Principal, raw_guild_id: str, raw_sound_id: str,
                          fields: dict[str, Any]) -> dict[str, Any]:
    """Any of `name`, `emoji`, `palette_event` (interface sounds only); MANAGE_SOUNDS."""
    async with rt.uow() as uow:
        gc: GuildContext = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        row = await _sound(uow.conn, gc.guild_id, raw_sound_id)
        require(gc, P.MANAGE_SOUNDS)
        if "palette_event" in fields and row["kind"] != "interface":
            raise validation_error("palette_event", "is only for interface sounds")
        if fields.get("emoji") is not None:
            fields = {**fields, "emoji": await check_sound_emoji(uow.conn, gc.guild_id, fields["emoji"])}
        values = {k: v for k, v in fields.items() if v != row[k]}  # type: ignore[literal-required]  # keys of SoundPatch
        if values:
            await guild_queries.lock_guild(uow.conn, gc.guild_id)
            await _check_free(uow, gc.guild_id, row["kind"], values.get("name"), values.get("palette_event"), row["id"])
            if "name" in values:
                values["name_norm"] = norm(values["name"])
            await queries.update_sound_row(uow.conn, gc.guild_id, row["id"], values)
            diff = changes(row, {k: v for k, v in values.items() if k != "name_norm"})
            await record(uow, "sound.update", actor_id=principal.user_id, target_type="sound", target_id=row["id"],
                         guild_id=gc.guild_id, data={"changes": diff})
            row = {**row, **values}  # type: ignore[typeddict-item]  # columns of sounds
            await _announce(uow, gc.guild_id)
    return {"sound": sound_view(row)}


async def do_delete_sound(rt: Runtime, principal: Principal, raw_guild_id: str, raw_sound_id: str) -> None:
    """MANAGE_SOUNDS; the file goes once the deletion has committed."""
    async with rt.uow() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        row = await _sound(uow.conn, gc.guild_id, raw_sound_id)
        require(gc, P.MANAGE_SOUNDS)
        await queries.delete_sound_row(uow.conn, gc.guild_id, row["id"])
        await drop_files(uow, rt.files, [row["file_id"]])
        await record(uow, "sound.delete", actor_id=principal.user_id, target_type="sound", target_id=row["id"],
                     guild_id=gc.guild_id, data={"name": row["name"], "kind": row["kind"]})
        await _announce(uow, gc.guild_id)
