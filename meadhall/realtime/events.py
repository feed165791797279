"""The event envelope: a gateway dispatch and exactly who may receive it.

Audience is always explicit user ids (house rule 4); `sessions` narrows delivery to some sessions of
those users (logout of one device), `exclude_sessions` skips the originating device (read-state sync).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from itertools import islice
from operator import lt
from typing import Any, NamedTuple


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
    MESSAGE_DELETE_BULK = "MESSAGE_DELETE_BULK"
    MESSAGE_REACTION_ADD = "MESSAGE_REACTION_ADD"
    MESSAGE_REACTION_REMOVE = "MESSAGE_REACTION_REMOVE"
    CHANNEL_PINS_UPDATE = "CHANNEL_PINS_UPDATE"
    TYPING_START = "TYPING_START"
    READ_STATE_UPDATE = "READ_STATE_UPDATE"
    NOTIFICATION_SETTINGS_UPDATE = "NOTIFICATION_SETTINGS_UPDATE"
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


# When each type is emitted and who receives it: (emitted when, received by). docs/reference/events.md is
# generated from this table (`make docs`); a type without its row fails the reference test.
DESCRIPTIONS: dict[EventType, tuple[str, str]] = {
    EventType.READY: ("a gateway session starts (IDENTIFY accepted)", "that connection"),
    EventType.RESUMED: ("a gateway session resumes, after the missed events were replayed", "that connection"),
    EventType.USER_UPDATE: ("the user's own account changes: profile, onboarding, avatar, two-factor on, off "
                            "or reset, instance administration granted or removed", "that user"),
    EventType.GUILD_CREATE: ("a server is created, or the receiver joined one (a full snapshot)",
                             "the creator, or the member who joined"),
    EventType.GUILD_UPDATE: ("a server's fields, images, public flag, owner or main flag change", "its members"),
    EventType.GUILD_DELETE: ("a server is deleted, or the receiver left, was kicked or banned",
                             "its members (deletion), or the removed user"),
    EventType.CHANNEL_CREATE: ("a room is created, or the receiver gained the right to view it",
                               "those who may view the room"),
    EventType.CHANNEL_UPDATE: ("a room changes: fields, background, permission overrides, order, its category "
                               "deleted", "those who may view the room"),
    EventType.CHANNEL_DELETE: ("a room is deleted, or the receiver lost the right to view it",
                               "those who could view the room"),
    EventType.MEMBER_ADD: ("a member joins a server", "its members, the new one included"),
    EventType.MEMBER_UPDATE: ("a member's nickname, roles, timeout, server style or public profile changes",
                              "the server's members"),
    EventType.MEMBER_REMOVE: ("a member leaves, is kicked, banned or deleted", "the server's remaining members"),
    EventType.ROLE_CREATE: ("a role is created", "the server's members"),
    EventType.ROLE_UPDATE: ("a role changes or moves", "the server's members"),
    EventType.ROLE_DELETE: ("a role is deleted", "the server's members"),
    EventType.GUILD_EMOJIS_UPDATE: ("a server's custom emoji list changes", "the server's members"),
    EventType.GUILD_SOUNDS_UPDATE: ("a server's sound list changes", "the server's members"),
    EventType.GUILD_COSMETICS_UPDATE: ("a server's cosmetics gallery changes", "the server's members"),
    EventType.MESSAGE_CREATE: ("a message is sent (by a user, a webhook or the system); the author's copy "
                               "carries the `nonce`",
                               "those who may view the room, or the conversation's participants; a private "
                               "message only its author and recipient"),
    EventType.MESSAGE_UPDATE: ("a message is edited (the full message)", "as MESSAGE_CREATE"),
    EventType.MESSAGE_DELETE: ("a message is deleted (not sent per message when a whole room, server or "
                               "conversation is deleted)", "as MESSAGE_CREATE"),
    EventType.MESSAGE_DELETE_BULK: ("messages of one room are deleted together (a ban that deletes the banned "
                                    "user's recent messages)", "the room's viewers; the id of a private message "
                                    "only its author and recipient"),
    EventType.MESSAGE_REACTION_ADD: ("a reaction is added", "as the message"),
    EventType.MESSAGE_REACTION_REMOVE: ("a reaction is removed, by its author or a moderator", "as the message"),
    EventType.CHANNEL_PINS_UPDATE: ("a message is pinned or unpinned", "those who may view the room"),
    EventType.TYPING_START: ("a user calls `POST /channels/{id}/typing`",
                             "those who may view the room, except the typist"),
    EventType.READ_STATE_UPDATE: ("the user acknowledges a room or conversation",
                                  "that user's other sessions (not the one that acknowledged)"),
    EventType.NOTIFICATION_SETTINGS_UPDATE: ("the user changes a notification setting of a server, room or "
                                             "conversation (the changed setting)", "that user"),
    EventType.PRESENCE_UPDATE: ("a user's effective status, custom status, public profile or friends-scope "
                                "style changes (offline after 2 minutes without activity)", "the user's friends"),
    EventType.RELATIONSHIP_ADD: ("a relationship appears or changes type (as seen by the receiver)",
                                 "the users of the relationship concerned"),
    EventType.RELATIONSHIP_REMOVE: ("a relationship disappears", "the users of the relationship concerned"),
    EventType.DM_CHANNEL_CREATE: ("a conversation is created, or the receiver was added to a group",
                                  "its participants"),
    EventType.DM_CHANNEL_UPDATE: ("a group changes: members, name, icon, owner, group or one-to-one",
                                  "its participants"),
    EventType.DM_CHANNEL_DELETE: ("a conversation is removed, or the receiver was removed from it",
                                  "its participants, the removed one included"),
    EventType.CALL_CREATE: ("a call starts ringing", "the conversation's participants"),
    EventType.CALL_UPDATE: ("a call's status or a participant's state changes", "the conversation's participants"),
    EventType.CALL_DELETE: ("a call ends (ended, missed or declined)", "the conversation's participants"),
    EventType.VOICE_STATE_UPDATE: ("a user joins, leaves or moves between voice rooms, changes a voice flag, "
                                   "or is muted, deafened or disconnected by a moderator",
                                   "the server's members who may view that voice room"),
    EventType.SOUNDBOARD_PLAY: ("a soundboard sound is played", "the participants of that voice room"),
    EventType.SESSION_INVALIDATED: ("sessions are revoked: ban, administrator action, logout, logout everywhere, "
                                    "password change, session revoked; the connection then closes with 4010",
                                    "the connections of the revoked sessions"),
}


class Event(NamedTuple):
    """Immutable, and a named tuple rather than a frozen dataclass: a profile change makes one per guild of the
    user (100 and more), and a frozen dataclass took 0.77 us to build against 0.23 us."""

    # An EventType for a dispatch; the gateway's node-to-node messages (gateway/hub.py, NodeMessage)
    # travel in the same envelope, so the field is the wire string both are.
    type: str
    data: Mapping[str, Any]
    users: tuple[int, ...]
    sessions: tuple[int, ...] | None = None
    exclude_sessions: tuple[int, ...] = ()
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


def event(type_: EventType, data: Mapping[str, Any], users: list[int] | set[int] | tuple[int, ...], **kw: Any) -> Event:
    """Build an event with a de-duplicated, sorted audience."""
    ids = tuple(users)
    # Most audiences come from queries in id order: one pass of comparisons proves such a list sorted and
    # without repeats, where hashing and sorting it again cost 0.25 ms for 1,000 friends.
    if len(ids) > 1 and not all(map(lt, ids, islice(ids, 1, None))):
        ids = tuple(sorted(set(ids)))
    return Event(type_, data, ids, **kw)
