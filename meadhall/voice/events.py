"""Event payload builders of the voice rooms (docs/reference/events.md): VOICE_STATE_UPDATE to the members who
may view the room concerned, SOUNDBOARD_PLAY to the participants of one voice room only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from meadhall.realtime.events import Event, EventType, event


def notify_voice_state(view: dict[str, Any], viewers: Iterable[int]) -> Event:
    return event(EventType.VOICE_STATE_UPDATE, view, set(viewers))


def notify_soundboard_play(guild_id: int, channel_id: int, user_id: int, sound: dict[str, Any],
                           participants: Iterable[int]) -> Event:
    data = {"guild_id": str(guild_id), "channel_id": str(channel_id), "user_id": str(user_id), "sound": sound}
    return event(EventType.SOUNDBOARD_PLAY, data, set(participants))
