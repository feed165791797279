"""What a higher layer does once a message is sent (Web Push, docs/push.md). Messages know nothing of push; the
push package adds to these hooks from its `setup.py` (create_app). Two moments:

- `record_sent`, inside the send's transaction: a durable note of the work to do (the push outbox row), which
  exists exactly when the message does. It writes and returns; a failure fails the send (the transaction is
  rolled back, the message with it).
- `announce_sent`, after the commit: plain functions that must return at once (wake the worker, never wait for
  it): the send's answer must not wait for a push service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

from meadhall.core.hooks import Hook
from meadhall.db.uow import UnitOfWork
from meadhall.messages.views import MessageView

log = structlog.get_logger("meadhall.messages")


@dataclass(frozen=True)
class SentMessage:
    """A user's message that was just stored (never a system message)."""

    message: MessageView  # the message as its author sees it (OpenAPI: sendMessage)
    channel_id: int
    guild_id: int | None  # None in a direct conversation
    channel_name: str | None
    author_id: int
    mentioned: list[int]  # users whose mention count it raised: visible mentions, or a private message's recipient
    conversation: list[int]  # participants of a direct conversation who receive it; empty in guild rooms
    # Whether `record_sent` ran in the message's transaction. A path that only announces after its commit leaves
    # the listener to write its note then (a process killed in between loses it).
    recorded: bool = False


SentHook = Callable[[Any, SentMessage], None]  # (the runtime, the message)
StoredHook = Callable[[Any, UnitOfWork, SentMessage], Awaitable[None]]  # (the runtime, the unit of work, the message)
message_sent: Hook[SentHook] = Hook()  # after the commit
message_stored: Hook[StoredHook] = Hook()  # inside the send's transaction


def wanted() -> bool:
    """Whether anyone listens (the send path skips building the value otherwise)."""
    return bool(message_sent) or bool(message_stored)


async def record_sent(rt: Any, uow: UnitOfWork, sent: SentMessage) -> None:
    """Inside the message's transaction; errors propagate (a half-written note must not commit)."""
    for hook in message_stored:
        await hook(rt, uow, sent)


def announce_sent(rt: Any, sent: SentMessage) -> None:
    for name, hook in message_sent.items():
        try:
            hook(rt, sent)
        except Exception:  # the message is committed: a listener's failure must not fail the send
            log.exception("message-sent hook failed", hook=name)
