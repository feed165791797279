"""Typed rows of the message tables, as the queries of `meadhall.messages.queries` return them.

Each type is a read-only mapping with exactly these keys. The queries return SQLAlchemy `RowMapping`s
typed as these TypedDicts through `typing.cast`, which costs nothing at run time: history pages and sends
are the hot paths (docs/benchmarks.md), and building a dict per row there would cost more than the typing
is worth. So never write to a row (a `RowMapping` refuses it); build a new dict instead. Rows built in
Python (a send's new message) are plain dicts of the same shape."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict


class MessageFields(TypedDict):
    """What a Message object shows of a `messages` row: every column but `content_norm` (a history page
    selects only these)."""

    id: int
    channel_id: int
    guild_id: int | None
    author_id: int | None
    webhook_id: int | None
    webhook_name: str | None
    webhook_avatar: str | None
    content: str
    kind: str
    recipient_id: int | None
    system_event: dict[str, Any] | None
    nonce: str | None
    reply_to_id: int | None
    mentions: list[str]
    mention_channels: list[str]
    mention_everyone: bool
    suppress_embeds: bool
    pinned: bool
    pinned_at: datetime | None
    created_at: datetime
    edited_at: datetime | None
    reacted: bool  # set by a trigger once the message had a reaction, never cleared
    has_attachments: bool  # set by a trigger once a file was bound to the message, never cleared


class MessageRow(MessageFields):
    """One whole row of `messages`."""

    content_norm: str  # the casefolded search copy of `content`


class ReactionCountRow(TypedDict):
    """Reactions of one message with one emoji (`select_reactions`)."""

    message_id: int
    emoji: str
    count: int
    first: datetime  # when the emoji was first used on the message: reactions show in that order
    me: int  # 1 when the viewer reacted so, else 0


class ReadStateRow(TypedDict):
    """One row of `read_states`."""

    user_id: int
    channel_id: int
    last_read_message_id: int | None
    mention_count: int
    updated_at: datetime
