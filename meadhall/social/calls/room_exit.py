"""Leaving a call also takes the user out of its media-server room (docs/social.md, "Calls"): a participant
who left, was removed from the group, or whose call finished must not stay connected, nor come back with the
token they still hold (the reconciliation job removes those). The media server's client belongs to the
voice rooms, which sit above calls; they register it here. Transitions run in units of work that carry no
runtime, so the hook is registered with the node's runtime bound to it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from meadhall.db.uow import UnitOfWork

# (conversation id, user id) -> the user is out of the conversation call's media-server room.
RoomExitHook = Callable[[int, int], Awaitable[None]]
_room_exit_hooks: dict[str, RoomExitHook] = {}


def on_call_room_exit(name: str, hook: RoomExitHook) -> None:
    """Register (or replace, by name: `create_app` may run more than once in a process) a hook."""
    _room_exit_hooks[name] = hook


def exit_call_room_after_commit(uow: UnitOfWork, channel_id: int, user_id: int) -> None:
    """Once the transaction that made the user leave has committed (a rolled-back leave removes nobody)."""
    async def run() -> None:
        for hook in list(_room_exit_hooks.values()):
            await hook(channel_id, user_id)

    uow.after_commit(run)
