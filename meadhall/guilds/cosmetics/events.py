"""Event payload builder for the cosmetics gallery (docs/reference/events.md)."""

from __future__ import annotations

from meadhall.guilds.cosmetics.queries import CosmeticRow
from meadhall.guilds.cosmetics.views import cosmetic_view
from meadhall.realtime.events import Event, EventType, event


def notify_cosmetics_update(guild_id: int, rows: list[CosmeticRow], members: list[int]) -> Event:
    """GUILD_COSMETICS_UPDATE: the guild's whole gallery, to its members."""
    return event(EventType.GUILD_COSMETICS_UPDATE,
                 {"guild_id": str(guild_id), "cosmetics": [cosmetic_view(r) for r in rows]}, members)
