"""The event envelope: a gateway dispatch and exactly who may receive it.

Audience is always explicit user ids (house rule 4); `sessions` narrows delivery to some sessions of
those users (logout of one device), `exclude_sessions` skips the originating device (read-state sync).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventType(StrEnum):
    """Every gateway dispatch type: the one registry (docs/reference/events.md is generated from it).
    A StrEnum, so a member is its wire name and encodes as a plain string."""

    READY = "READY"
    RESUMED = "RESUMED"
    USER_UPDATE = "USER_UPDATE"
    GUILD_CREATE = "GUILD_CREATE"
    GUILD_UPDATE = "GUILD_UPDATE"
    GUILD_DELETE = "GUILD_DELETE"
    CHANNEL_CREATE = "CHANNEL_CREATE"
    CHANNEL_UPDATE = "CHANNEL_UPDATE"
    CHANNEL_DELETE = "CHANNEL_DELETE"
    MEMBER_ADD = "MEMBER_ADD"
    MEMBER_UPDATE = "MEMBER_UPDATE"
    MEMBER_REMOVE = "MEMBER_REMOVE"
    ROLE_CREATE = "ROLE_CREATE"
    ROLE_UPDATE = "ROLE_UPDATE"
    ROLE_DELETE = "ROLE_DELETE"
    GUILD_EMOJIS_UPDATE = "GUILD_EMOJIS_UPDATE"
    GUILD_SOUNDS_UPDATE = "GUILD_SOUNDS_UPDATE"
    GUILD_COSMETICS_UPDATE = "GUILD_COSMETICS_UPDATE"
    MESSAGE_CREATE = "MESSAGE_CREATE"
    MESSAGE_UPDATE = "MESSAGE_UPDATE"
    MESSAGE_DELETE = "MESSAGE_DELETE"
    MESSAGE_REACTION_ADD = "MESSAGE_REACTION_ADD"
    MESSAGE_REACTION_REMOVE = "MESSAGE_REACTION_REMOVE"
    CHANNEL_PINS_UPDATE = "CHANNEL_PINS_UPDATE"
    TYPING_START = "TYPING_START"
    READ_STATE_UPDATE = "READ_STATE_UPDATE"
    PRESENCE_UPDATE = "PRESENCE_UPDATE"
    RELATIONSHIP_ADD = "RELATIONSHIP_ADD"
    RELATIONSHIP_REMOVE = "RELATIONSHIP_REMOVE"
    DM_CHANNEL_CREATE = "DM_CHANNEL_CREATE"
    DM_CHANNEL_UPDATE = "DM_CHANNEL_UPDATE"
    DM_CHANNEL_DELETE = "DM_CHANNEL_DELETE"
    CALL_CREATE = "CALL_CREATE"
    CALL_UPDATE = "CALL_UPDATE"
    CALL_DELETE = "CALL_DELETE"
    VOICE_STATE_UPDATE = "VOICE_STATE_UPDATE"
    SOUNDBOARD_PLAY = "SOUNDBOARD_PLAY"
    SESSION_INVALIDATED = "SESSION_INVALIDATED"


@dataclass(frozen=True)
class Event:
    type: str
    data: dict[str, Any]
    users: tuple[int, ...]
    sessions: tuple[int, ...] | None = None
    exclude_sessions: tuple[int, ...] = field(default_factory=tuple)
    # Set by RedisBus when the event is published: every node receives it, and gateway resume buffers
    # shared in Redis use it to append an event once per gateway session whichever node appends it.
    id: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {
                "i": self.id,
                "t": self.type,
                "d": self.data,
                "u": list(self.users),
                "s": list(self.sessions) if self.sessions is not None else None,
                "x": list(self.exclude_sessions),
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> Event:
        doc = json.loads(raw)
        return cls(
            type=doc["t"],
            data=doc["d"],
            users=tuple(doc["u"]),
            sessions=tuple(doc["s"]) if doc["s"] is not None else None,
            exclude_sessions=tuple(doc["x"]),
            id=doc.get("i", ""),
        )

    def payload_json(self) -> str:
        """The dispatch payload `d`, encoded once per event (the gateway reuses it for every receiver)."""
        return json.dumps(self.data, separators=(",", ":"), ensure_ascii=False)


def event(type_: EventType, data: dict[str, Any], users: list[int] | set[int] | tuple[int, ...], **kw: Any) -> Event:
    """Build an event with a de-duplicated, sorted audience."""
    return Event(type_, data, tuple(sorted(set(users))), **kw)
