"""The events of messages (docs/reference/events.md): one `notify_*` builder per dispatch type. Each takes
what the service computed (views, the audience as user ids) and builds the event; services only emit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from meadhall.core.clock import iso
from meadhall.messages.views import MessageView
from meadhall.realtime.events import Event, EventType, event


def _ids(channel_id: int, guild_id: int | None) -> dict[str, str | None]:
    return {"channel_id": str(channel_id), "guild_id": None if guild_id is None else str(guild_id)}


def notify_message_create(view: MessageView, receivers: Sequence[int]) -> Event:
    """MESSAGE_CREATE: the Message as these receivers may see it."""
    return event(EventType.MESSAGE_CREATE, view, list(receivers))


def notify_message_update(view: MessageView, receivers: Sequence[int]) -> Event:
    """MESSAGE_UPDATE: the edited Message as these receivers may see it."""
    return event(EventType.MESSAGE_UPDATE, view, list(receivers))


def notify_message_delete(message_id: int, channel_id: int, guild_id: int | None, receivers: Sequence[int]
                          ) -> Event:
    return event(EventType.MESSAGE_DELETE, {"id": str(message_id), **_ids(channel_id, guild_id)}, list(receivers))


def notify_message_delete_bulk(message_ids: Sequence[int], channel_id: int, guild_id: int | None,
                               receivers: Sequence[int]) -> Event:
    """MESSAGE_DELETE_BULK: messages of one room deleted together (a ban deleting recent messages)."""
    payload = {"ids": [str(i) for i in message_ids], **_ids(channel_id, guild_id)}
    return event(EventType.MESSAGE_DELETE_BULK, payload, list(receivers))


def notify_reaction(added: bool, channel_id: int, guild_id: int | None, message_id: int, user_id: int, emoji: str,
                    receivers: Sequence[int]) -> Event:
    """MESSAGE_REACTION_ADD or MESSAGE_REACTION_REMOVE: one user's reaction with one emoji."""
    type_ = EventType.MESSAGE_REACTION_ADD if added else EventType.MESSAGE_REACTION_REMOVE
    payload = {**_ids(channel_id, guild_id), "message_id": str(message_id), "user_id": str(user_id), "emoji": emoji}
    return event(type_, payload, list(receivers))


def notify_pins(channel_id: int, guild_id: int | None, message_id: int, pinned: bool, last_pin: datetime | None,
                receivers: Sequence[int]) -> Event:
    """CHANNEL_PINS_UPDATE: a message was pinned or unpinned; the room's newest pin time after it."""
    payload = {**_ids(channel_id, guild_id), "message_id": str(message_id), "pinned": pinned,
               "last_pin_timestamp": iso(last_pin)}
    return event(EventType.CHANNEL_PINS_UPDATE, payload, list(receivers))


def notify_typing(channel_id: int, guild_id: int | None, user_id: int, now: datetime, receivers: Sequence[int]
                  ) -> Event:
    """TYPING_START: to the room's viewers but the one typing."""
    payload = {**_ids(channel_id, guild_id), "user_id": str(user_id), "timestamp": iso(now)}
    return event(EventType.TYPING_START, payload, list(receivers))


def notify_read_state(state: dict[str, Any], user_id: int, session_id: int) -> Event:
    """READ_STATE_UPDATE: to the user's other sessions (the one that acknowledged has the answer)."""
    return event(EventType.READ_STATE_UPDATE, state, [user_id], exclude_sessions=(session_id,))
