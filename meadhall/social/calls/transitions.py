"""The call-transition table (docs/social.md, "Calls"), applied to a call loaded under its row lock.

Each transition writes the database and the in-memory copy together and queues the event it causes:
CALL_UPDATE while the call goes on, CALL_DELETE (the final call) when it finishes. The receivers are the
conversation's participants as the caller states them (`LiveCall.audience`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.limits import CALL_DISCONNECT_SECONDS, CALL_RINGING_SECONDS
from meadhall.db.uow import UnitOfWork
from meadhall.realtime.events import EventType
from meadhall.social.calls import queries
from meadhall.social.calls.events import notify_call
from meadhall.social.calls.room_exit import exit_call_room_after_commit
from meadhall.social.calls.views import call_view

RINGING_SECONDS = CALL_RINGING_SECONDS  # docs/social.md, "Calls"
# A participant's gateway connections all gone for longer than this: they leave (the resume window).
DISCONNECT_SECONDS = CALL_DISCONNECT_SECONDS  # the resume window (docs/gateway.md)
QUIET = {"microphone": False, "camera": False, "screen": False}


@dataclass
class LiveCall:
    """An ongoing call and its participants (user id -> row copy), with who hears of its changes."""

    call: dict[str, Any]
    participants: dict[int, dict[str, Any]]
    audience: tuple[int, ...]

    @property
    def id(self) -> int:
        return int(self.call["id"])

    @property
    def status(self) -> str:
        return str(self.call["status"])

    @property
    def ongoing(self) -> bool:
        return self.call["ongoing_channel_id"] is not None

    @property
    def initiator_id(self) -> int:
        return int(self.call["initiator_id"])

    def in_state(self, state: str) -> list[int]:
        return [uid for uid, p in self.participants.items() if p["state"] == state]

    def state_of(self, user_id: int) -> str | None:
        p = self.participants.get(user_id)
        return None if p is None else str(p["state"])

    def view(self) -> dict[str, Any]:
        return call_view(self.call, self.participants.values())


async def load_live_calls(conn: AsyncConnection, call_ids: list[int], audiences: dict[int, tuple[int, ...]]
                          ) -> list[LiveCall]:
    """The ongoing ones of these calls, locked in id order; `audiences`: conversation id -> participants."""
    rows = [r for r in await queries.select_calls_by_ids(conn, call_ids, lock=True)
            if r["ongoing_channel_id"] is not None]
    parts = await queries.select_participants_of_calls(conn, [r["id"] for r in rows])
    return [LiveCall(dict(r), {p["user_id"]: dict(p) for p in parts.get(r["id"], [])},
                     audiences.get(r["channel_id"], ())) for r in rows]


def _emit(uow: UnitOfWork, live: LiveCall, type_: EventType) -> None:
    uow.emit(notify_call(type_, live.view(), live.audience))


async def _set_call(uow: UnitOfWork, live: LiveCall, values: dict[str, Any]) -> None:
    await queries.update_call_row(uow.conn, live.id, values)
    live.call.update(values)


async def _set_participant(uow: UnitOfWork, live: LiveCall, user_id: int, values: dict[str, Any]) -> None:
    await queries.update_call_participant(uow.conn, live.id, user_id, values)
    live.participants[user_id].update(values)
    if values.get("state") == "left":  # only a joined participant becomes `left`
        exit_call_room_after_commit(uow, int(live.call["channel_id"]), user_id)


async def finish(uow: UnitOfWork, live: LiveCall, status: str, reason: str) -> None:
    """The call becomes final: who was in it has `left`, who was still ringing `missed`; CALL_DELETE."""
    for uid, p in live.participants.items():
        if p["state"] == "joined":
            await _set_participant(uow, live, uid, {"state": "left", "left_at": uow.now, **QUIET})
        elif p["state"] == "ringing":
            await _set_participant(uow, live, uid, {"state": "missed"})
    await _set_call(uow, live, {"status": status, "end_reason": reason, "ended_at": uow.now,
                                "ongoing_channel_id": None})
    _emit(uow, live, EventType.CALL_DELETE)


async def join(uow: UnitOfWork, live: LiveCall, user_id: int) -> None:
    """A participant (ringing, declined, missed, left, or added to the group since the start) joins with
    the microphone on; the first one besides the initiator makes the call active."""
    values = {"state": "joined", "joined_at": uow.now, "left_at": None, "microphone": True, "camera": False,
              "screen": False}
    if user_id in live.participants:
        await _set_participant(uow, live, user_id, values)
    else:
        row = {"call_id": live.id, "user_id": user_id, **values}
        await queries.insert_call_participants(uow.conn, [row])
        live.participants[user_id] = row
    if live.status == "ringing" and user_id != live.initiator_id:
        await _set_call(uow, live, {"status": "active", "started_at": uow.now})
    _emit(uow, live, EventType.CALL_UPDATE)


async def leave(uow: UnitOfWork, live: LiveCall, user_id: int) -> None:
    """A joined participant leaves (or is disconnected, or removed from the group). While ringing only the
    initiator can be joined: the call is canceled. An active call ends when fewer than two remain."""
    await _set_participant(uow, live, user_id, {"state": "left", "left_at": uow.now, **QUIET})
    if live.status == "ringing":
        await finish(uow, live, "missed", "canceled")
    elif len(live.in_state("joined")) < 2:
        await finish(uow, live, "ended", "completed")
    else:
        _emit(uow, live, EventType.CALL_UPDATE)


async def decline(uow: UnitOfWork, live: LiveCall, user_id: int) -> None:
    """A ringing participant declines; the last one to do so while nobody answered ends the call."""
    await _set_participant(uow, live, user_id, {"state": "declined"})
    if live.status == "ringing" and not live.in_state("ringing"):
        await finish(uow, live, "declined", "declined")
    else:
        _emit(uow, live, EventType.CALL_UPDATE)


async def set_flags(uow: UnitOfWork, live: LiveCall, user_id: int, flags: dict[str, bool]) -> None:
    changed = {k: v for k, v in flags.items() if live.participants[user_id][k] != v}
    if changed:
        await _set_participant(uow, live, user_id, changed)
        _emit(uow, live, EventType.CALL_UPDATE)


async def ring_out(uow: UnitOfWork, live: LiveCall) -> None:
    """60 seconds after the start: an unanswered call is missed; in an active call, who still rings has
    missed it."""
    if live.status == "ringing":
        await finish(uow, live, "missed", "timeout")
        return
    ringing = live.in_state("ringing")
    for uid in ringing:
        await _set_participant(uow, live, uid, {"state": "missed"})
    if ringing:
        _emit(uow, live, EventType.CALL_UPDATE)


async def drop(uow: UnitOfWork, live: LiveCall, user_id: int) -> None:
    """The participant is no longer in the conversation: a joined one leaves, a ringing one declines;
    anyone else is untouched (their entry stays as history)."""
    state = live.state_of(user_id)
    if not live.ongoing:
        return
    if state == "joined":
        await leave(uow, live, user_id)
    elif state == "ringing":
        await decline(uow, live, user_id)


async def end_with_conversation(uow: UnitOfWork, live: LiveCall) -> None:
    """The conversation is deleted: an active call has ended, a ringing one was missed."""
    await finish(uow, live, "ended" if live.status == "active" else "missed", "conversation_deleted")
