"""Event payload builders of conversations (docs/reference/events.md): participants only, each receiver
with its own view (the counterpart and the last message differ per receiver)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from meadhall.realtime.events import Event, EventType, event
from meadhall.social.conversations.views import ConversationView


def notify_conversation(type_: EventType, views: Mapping[int, ConversationView]) -> list[Event]:
    """DM_CHANNEL_CREATE / DM_CHANNEL_UPDATE: one event per receiver, carrying that receiver's view."""
    return [event(type_, view, [receiver]) for receiver, view in views.items()]


def notify_conversation_delete(channel_id: int, receivers: Iterable[int]) -> Event:
    """DM_CHANNEL_DELETE `{id}`: the conversation is gone, or the receivers were removed from it."""
    return event(EventType.DM_CHANNEL_DELETE, {"id": str(channel_id)}, list(receivers))
