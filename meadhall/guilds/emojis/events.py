"""Event payload builder for custom emojis (docs/reference/events.md)."""

from __future__ import annotations

from meadhall.guilds.emojis.queries import EmojiRow
from meadhall.guilds.emojis.views import emoji_view
from meadhall.realtime.events import Event, EventType, event


def notify_emojis_update(guild_id: int, rows: list[EmojiRow], members: list[int]) -> Event:
    """GUILD_EMOJIS_UPDATE: the guild's whole emoji list, to its members."""
    return event(EventType.GUILD_EMOJIS_UPDATE,
                 {"guild_id": str(guild_id), "emojis": [emoji_view(r) for r in rows]}, members)
