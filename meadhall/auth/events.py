"""Payload builders for the session events of realtime/events.py (docs/reference/events.md)."""

from __future__ import annotations

from meadhall.realtime.events import Event, EventType, event


def notify_session_invalidated(user_id: int, session_ids: list[int], reason: str) -> list[Event]:
    """SESSION_INVALIDATED `{reason, session_id}`, one per session, to that session's connections."""
    return [
        event(EventType.SESSION_INVALIDATED, {"reason": reason, "session_id": str(sid)}, [user_id], sessions=(sid,))
        for sid in session_ids
    ]
