"""Leaving a call also takes the user out of its media-server room (docs/social.md, "Calls"): a participant
who left, was removed from the group, or whose call finished must not stay connected, nor come back with the
token they still hold (the reconciliation job removes those). The media server's client belongs to the
voice rooms, which sit above calls; they register it here. Transitions run in units of work that carry no
runtime, so the hook is added with the node's runtime bound to it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from meadhall.core.hooks import Hook
from meadhall.db.uow import UnitOfWork

# (conversation id, user id) -> the user is out of the conversation call's media-server room.
RoomExitHook = Callable[[int, int], Awaitable[None]]
call_room_exit: Hook[RoomExitHook] = Hook()


def exit_call_room_after_commit(uow: UnitOfWork, channel_id: int, user_id: int) -> None:
    """Once the transaction that made the user leave has committed (a rolled-back leave removes nobody)."""
    async def run() -> None:
        for hook in call_room_exit:
            await hook(channel_id, user_id)

    uow.after_commit(run)
