"""What a change of a conversation's participants causes in the calls sub-package, offered as a hook
(calls import conversations, never the reverse). The hook runs inside the caller's unit of work, before
the rows go, so an ongoing call is ended in the same transaction as the change that ends it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from meadhall.core.hooks import Hook
from meadhall.db.uow import UnitOfWork


@dataclass(frozen=True)
class ParticipantsLeft:
    """`removed`: users who left or were removed from the conversation. `deleted`: the whole
    conversation goes (its last two participants' conversation was left)."""

    channel_id: int
    removed: tuple[int, ...]
    deleted: bool
    remaining: tuple[int, ...]  # participants after the change (empty when deleted)
    audience: tuple[int, ...]  # participants before the change: who hears of what it ends


LeaveHook = Callable[[UnitOfWork, ParticipantsLeft], Awaitable[None]]
participants_left: Hook[LeaveHook] = Hook()


async def announce_participants_left(uow: UnitOfWork, change: ParticipantsLeft) -> None:
    for hook in participants_left:
        await hook(uow, change)
