"""The Call object (OpenAPI: getCall) and its participants."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from meadhall.core.clock import as_utc, iso


def participant_view(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "user_id": str(row["user_id"]),
        "state": row["state"],
        "microphone": bool(row["microphone"]),
        "camera": bool(row["camera"]),
        "screen": bool(row["screen"]),
        "joined_at": iso(row["joined_at"]),
        "left_at": iso(row["left_at"]),
    }


def duration_seconds(call: Mapping[str, Any]) -> int:
    """Whole seconds between becoming active and the end; 0 for a call that never became active or is
    still ongoing."""
    started, ended = as_utc(call["started_at"]), as_utc(call["ended_at"])
    if started is None or ended is None:
        return 0
    return max(0, int((ended - started).total_seconds()))


def call_view(call: Mapping[str, Any], participants: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "id": str(call["id"]),
        "channel_id": str(call["channel_id"]),
        "initiator_id": str(call["initiator_id"]),
        "status": call["status"],
        "media": call["media"],
        "created_at": iso(call["created_at"]),
        "started_at": iso(call["started_at"]),
        "ended_at": iso(call["ended_at"]),
        "duration_seconds": duration_seconds(call),
        "end_reason": call["end_reason"],
        "participants": [participant_view(p) for p in sorted(participants, key=lambda p: int(p["user_id"]))],
    }
