"""Event payload builder for sounds (docs/reference/events.md)."""

from __future__ import annotations

from meadhall.guilds.sounds.queries import SoundRow
from meadhall.guilds.sounds.views import sound_view
from meadhall.realtime.events import Event, EventType, event


def notify_sounds_update(guild_id: int, rows: list[SoundRow], members: list[int]) -> Event:
    """GUILD_SOUNDS_UPDATE: the guild's whole sound list (both kinds), to its members."""
    return event(EventType.GUILD_SOUNDS_UPDATE,
                 {"guild_id": str(guild_id), "sounds": [sound_view(r) for r in rows]}, members)
