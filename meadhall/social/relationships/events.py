"""Event payload builders for relationships (docs/reference/events.md): each event is addressed to one of the
pair, seen from that user's side. No builder here is ever addressed to a blocked user about the block."""

from __future__ import annotations

from typing import Any

from meadhall.realtime.audience import only
from meadhall.realtime.events import Event, EventType, event


def notify_relationship_add(receiver: int, view: dict[str, Any]) -> Event:
    """RELATIONSHIP_ADD: a relationship of `receiver` appeared or changed type (the Relationship as they
    see it)."""
    return event(EventType.RELATIONSHIP_ADD, view, only(receiver))


def notify_relationship_remove(receiver: int, other_id: int, type_: str) -> Event:
    """RELATIONSHIP_REMOVE: `receiver`'s relationship of type `type_` with `other_id` disappeared."""
    return event(EventType.RELATIONSHIP_REMOVE, {"id": str(other_id), "type": type_}, only(receiver))
