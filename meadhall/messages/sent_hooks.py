"""What a higher layer does once a message is sent (Web Push, docs/push.md): a hook the send path calls after
its transaction committed. Messages know nothing of push; the push package registers here (create_app).

Hooks are plain functions that must return at once (queue the work, never wait for it): they run on the
send path, whose answer must not wait for a push service."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

log = structlog.get_logger("meadhall.messages")


@dataclass(frozen=True)
class SentMessage:
    """A user's message that was just stored (never a system message)."""

    message: dict[str, Any]  # the message as its author sees it (OpenAPI: sendMessage)
    channel_id: int
    guild_id: int | None  # None in a direct conversation
    channel_name: str | None
    author_id: int
    mentioned: list[int]  # users whose mention count it raised: visible mentions, or a private message's recipient
    conversation: list[int]  # participants of a direct conversation who receive it; empty in guild rooms


SentHook = Callable[[Any, SentMessage], None]  # (the runtime, the message)
_hooks: dict[str, SentHook] = {}


def on_message_sent(name: str, hook: SentHook) -> None:
    """Register (or replace, by name: apps may be built more than once in a process)."""
    _hooks[name] = hook


def wanted() -> bool:
    """Whether anyone listens (the send path skips building the value otherwise)."""
    return bool(_hooks)


def announce_sent(rt: Any, sent: SentMessage) -> None:
    for name, hook in list(_hooks.items()):
        try:
            hook(rt, sent)
        except Exception:  # the message is committed: a listener's failure must not fail the send
            log.exception("message-sent hook failed", hook=name)
