"""What a change of a conversation's participants does to its ongoing call (docs/social.md, "Calls"),
added to the conversations' `participants_left` hook (calls/setup.py): it runs in the same transaction, before
the rows go.

- The conversation is deleted: the call ends (`ended` if it was active, else `missed`) with
  `conversation_deleted`; CALL_DELETE reaches the participants it had.
- A participant is removed from a group (or leaves it): a joined one leaves the call, a ringing one
  declines it, with the usual consequences. That event still reaches the removed user (the audience is the
  participants before the change); later ones do not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from meadhall.core.hooks import Hook
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime
from meadhall.social.calls import queries, transitions
from meadhall.social.calls.transitions import load_live_calls
from meadhall.social.conversations.hooks import ParticipantsLeft


async def apply_participants_left(uow: UnitOfWork, change: ParticipantsLeft) -> None:
    call = await queries.select_ongoing_call(uow.conn, change.channel_id)
    if call is None:
        return
    lives = await load_live_calls(uow.conn, [call["id"]], {change.channel_id: change.audience})
    if not lives:
        return
    live = lives[0]
    if change.deleted:
        await transitions.end_with_conversation(uow, live)
        return
    for user_id in change.removed:
        await transitions.drop(uow, live, user_id)


# One voice context at a time (docs/social.md, "Calls"): starting or joining a call takes the user out of a
# guild voice room. Voice rooms sit above calls, so they register what that means (voice/setup.py).
VoiceContextHook = Callable[[Runtime, int], Awaitable[None]]
voice_context_taken: Hook[VoiceContextHook] = Hook()


async def announce_voice_context_taken(rt: Runtime, user_id: int) -> None:
    """After the call's transaction: the user is in a call now, and in no other voice context."""
    for hook in voice_context_taken:
        await hook(rt, user_id)
