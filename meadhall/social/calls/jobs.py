"""The call timers (docs/social.md, "Calls"), run by one node per period (the jobs' claim in the shared
store): the 60-second ringing timeout and the disconnection rule (a joined participant whose gateway
connections have all been gone for more than 120 seconds leaves).

Each call is changed in its own transaction, under the conversation's and the call's row locks, and the
condition is checked again there: a participant who answered meanwhile, or a node that ran the same
period's work late, changes nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from meadhall.accounts.presence import client_last_seen
from meadhall.core.clock import as_utc
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime
from meadhall.social.calls import queries, transitions
from meadhall.social.calls.transitions import DISCONNECT_SECONDS, RINGING_SECONDS, LiveCall, load_live_calls
from meadhall.social.conversations.queries import select_participants

RING_CHECK_EVERY = 5.0  # a call stops ringing at most this late
DISCONNECT_CHECK_EVERY = 10.0


async def _in_call(uow: UnitOfWork, call_id: int, channel_id: int) -> LiveCall | None:
    """The call if still ongoing, locked like every writer locks it, with its conversation's participants."""
    await queries.lock_conversation(uow.conn, channel_id)
    audience = tuple(p["user_id"] for p in await select_participants(uow.conn, channel_id))
    lives = await load_live_calls(uow.conn, [call_id], {channel_id: audience})
    return lives[0] if lives else None


def _timestamp(value: datetime | None) -> float:
    at = as_utc(value)
    return 0.0 if at is None else at.timestamp()


async def expire_ringing(rt: Runtime) -> int:
    """Calls created more than 60 s ago that still ring: unanswered ones are missed, participants still
    ringing in active ones have missed them. Returns how many calls changed."""
    cutoff = rt.clock.now() - timedelta(seconds=RINGING_SECONDS)
    async with rt.read() as uow:
        due = await queries.select_ringing_due(uow.conn, cutoff)
    changed = 0
    for call_id, channel_id in due:
        async with rt.uow() as uow:
            live = await _in_call(uow, call_id, channel_id)
            if live is None or _timestamp(live.call["created_at"]) > cutoff.timestamp():
                continue
            if live.status == "ringing" or live.in_state("ringing"):
                await transitions.ring_out(uow, live)
                changed += 1
    return changed


async def disconnect_gone(rt: Runtime) -> int:
    """Joined participants not heard of on any gateway connection for more than 120 s (counted from when
    they joined, if later) leave their call. Returns how many left."""
    now = rt.clock.timestamp()
    async with rt.read() as uow:
        joined = await queries.select_joined_participants(uow.conn)
    gone: list[tuple[int, int, int]] = []
    for call_id, channel_id, user_id, joined_at in joined:
        seen = await client_last_seen(rt, user_id)
        if now - max(seen or 0.0, _timestamp(joined_at)) > DISCONNECT_SECONDS:
            gone.append((call_id, channel_id, user_id))
    left = 0
    for call_id, channel_id, user_id in gone:
        async with rt.uow() as uow:
            live = await _in_call(uow, call_id, channel_id)
            # Joined again since the look above: the 120 s count from the new join.
            if (live is not None and live.state_of(user_id) == "joined"
                    and now - _timestamp(live.participants[user_id]["joined_at"]) > DISCONNECT_SECONDS):
                await transitions.leave(uow, live, user_id)
                left += 1
    return left


def add_call_jobs(rt: Runtime) -> None:
    async def ringing() -> None:
        await expire_ringing(rt)

    async def disconnections() -> None:
        await disconnect_gone(rt)

    rt.jobs.add("call-ringing", RING_CHECK_EVERY, ringing)
    rt.jobs.add("call-disconnections", DISCONNECT_CHECK_EVERY, disconnections)
