"""Event payload builders for calls (docs/reference/events.md): CALL_CREATE, CALL_UPDATE, CALL_DELETE carry
the whole Call and reach the conversation's participants only."""

from __future__ import annotations

from typing import Any

from meadhall.realtime.events import Event, EventType, event


def notify_call(type_: EventType, call: dict[str, Any], participants: list[int] | tuple[int, ...]) -> Event:
    return event(type_, call, participants)
