"""The rules of notification levels (docs/push.md, "Notification levels"), pure: defaults, what counts as
muted, the effective level of a message for a user, and the API's view of a setting."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from meadhall.core.clock import as_utc, iso

ALL, MENTIONS, NOTHING, DEFAULT = "all", "mentions", "nothing", "default"
GUILD_DEFAULT = MENTIONS
ROOM_DEFAULT = DEFAULT
CONVERSATION_DEFAULT = ALL  # so that the defaults notify exactly what Web Push's triggers name


def muted(until: datetime | None, now: datetime) -> bool:
    until = as_utc(until)
    return until is not None and until > now


def still_muted(until: datetime | None, now: datetime) -> datetime | None:
    """A mute that has passed is no mute: stored and shown as null. Kept to the millisecond, as shown."""
    until = as_utc(until)
    if until is None or not muted(until, now):
        return None
    return until.replace(microsecond=until.microsecond // 1000 * 1000)


def guild_is_default(level: str, muted_until: datetime | None, suppress_everyone: bool) -> bool:
    return level == GUILD_DEFAULT and muted_until is None and not suppress_everyone


def room_is_default(level: str, muted_until: datetime | None, conversation: bool) -> bool:
    return level == (CONVERSATION_DEFAULT if conversation else ROOM_DEFAULT) and muted_until is None


def guild_setting_view(guild_id: int, level: str, muted_until: datetime | None, suppress_everyone: bool
                       ) -> dict[str, Any]:
    return {"guild_id": str(guild_id), "level": level, "muted_until": iso(muted_until),
            "suppress_everyone": bool(suppress_everyone)}


def room_setting_view(channel_id: int, level: str, muted_until: datetime | None) -> dict[str, Any]:
    return {"channel_id": str(channel_id), "level": level, "muted_until": iso(muted_until)}


def effective_level(guild: tuple[str, datetime | None] | None, room: tuple[str, datetime | None] | None,
                    now: datetime, *, conversation: bool = False) -> str:
    """The level a message of the room has for a user: the room's unless `default`, else the server's; a room
    or server muted until a later time counts as `nothing` until then. `None` is a setting left at its
    default."""
    if conversation:
        level, until = room or (CONVERSATION_DEFAULT, None)
        return NOTHING if muted(until, now) else level
    guild_level, guild_until = guild or (GUILD_DEFAULT, None)
    room_level, room_until = room or (ROOM_DEFAULT, None)
    if muted(guild_until, now) or muted(room_until, now):
        return NOTHING
    return guild_level if room_level == DEFAULT else room_level
