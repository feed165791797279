"""The event envelope: a gateway dispatch and exactly who may receive it.

Audience is always explicit user ids (house rule 4); `sessions` narrows delivery to some sessions of
those users (logout of one device), `exclude_sessions` skips the originating device (read-state sync).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


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


def event(type_: str, data: dict[str, Any], users: list[int] | set[int] | tuple[int, ...], **kw: Any) -> Event:
    """Build an event with a de-duplicated, sorted audience."""
    return Event(type_, data, tuple(sorted(set(users))), **kw)
