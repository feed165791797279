"""Calls in direct conversations (docs/social.md, "Calls"; OpenAPI: startCall, getCall, joinCall, declineCall,
leaveCall, updateCallFlags, listCalls): one ongoing call per conversation, a ringing phase before `active`,
media-server credentials for the room `dm_<channel_id>`, finished calls kept as history.

Every writer takes the conversation's row first, then the call rows it changes in id order (the call of this
conversation and the other call the caller is joined in, which they leave: a user is in one voice context
at a time).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import select_user
from meadhall.api.pagination import Page
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.db.uow import UnitOfWork
from meadhall.integrations.livekit import MediaGrant, call_room, check_voice_enabled, media_token
from meadhall.realtime.events import EventType
from meadhall.runtime import Runtime
from meadhall.social.blocks import check_not_blocked
from meadhall.social.calls import queries, transitions
from meadhall.social.calls.events import notify_call
from meadhall.social.calls.hooks import announce_voice_context_taken
from meadhall.social.calls.transitions import LiveCall, load_live_calls
from meadhall.social.calls.views import call_view
from meadhall.social.conversations.access import (
    Conversation,
    access_conversation_or_wrong_type,
    load_conversation,
)
from meadhall.social.conversations.queries import select_participants


@dataclass(frozen=True)
class InCall:
    """What a start or join answers: the call and the caller's media-server credentials."""

    call: dict[str, Any]
    user_id: int
    display_name: str


def _answer(rt: Runtime, joined: InCall, now: datetime) -> dict[str, Any]:
    room = call_room(int(joined.call["channel_id"]))
    # In calls every source may be published and no guild permission applies: the metadata flags are false.
    token = media_token(rt.settings, joined.user_id, joined.display_name, MediaGrant(room), now)
    return {"call": joined.call, "token": token, "url": rt.settings.MEDIA_PUBLIC_URL, "room": room}


async def check_call_not_blocked(conn: AsyncConnection, conv: Conversation, user_id: int) -> None:
    """In a one-to-one conversation a block (either way) prevents new calls and joining; it does not end
    a call in progress."""
    if not conv.is_group:
        for other in conv.participant_ids:
            await check_not_blocked(conn, user_id, other)


async def _access_locked(uow: UnitOfWork, principal: Principal, raw_channel_id: str) -> Conversation:
    """The caller's conversation, re-read under its row lock (a concurrent removal has either happened or
    waits for us)."""
    conv = await access_conversation_or_wrong_type(uow.conn, principal, raw_channel_id, uow.now)
    await queries.lock_conversation(uow.conn, conv.channel_id)
    fresh = await load_conversation(uow.conn, conv.channel_id)
    if fresh is None or not fresh.has(principal.user_id):
        raise AppError("channel.not_found")
    return fresh


async def _lock_calls(uow: UnitOfWork, conv: Conversation, user_id: int) -> tuple[LiveCall | None, list[LiveCall]]:
    """(this conversation's ongoing call, the other ongoing calls the user is joined in), locked in id order."""
    this = await queries.select_ongoing_call(uow.conn, conv.channel_id)
    others = [(c, ch) for c, ch in await select_joined_calls(uow.conn, user_id) if ch != conv.channel_id]
    audiences = {conv.channel_id: tuple(conv.participant_ids)}
    for _, channel_id in others:
        audiences[channel_id] = tuple(p["user_id"] for p in await select_participants(uow.conn, channel_id))
    ids = [c for c, _ in others] + ([this["id"]] if this is not None else [])
    lives = await load_live_calls(uow.conn, ids, audiences)
    mine = next((lc for lc in lives if lc.call["channel_id"] == conv.channel_id), None)
    return mine, [lc for lc in lives if lc is not mine]


async def select_joined_calls(conn: AsyncConnection, user_id: int) -> list[tuple[int, int]]:
    """(call id, conversation id) of the ongoing calls the user is joined in."""
    ids = await queries.select_joined_call_ids(conn, user_id)
    return [(r["id"], r["channel_id"]) for r in await queries.select_calls_by_ids(conn, ids)]


async def _leave_other_calls(uow: UnitOfWork, others: list[LiveCall], user_id: int) -> None:
    """One voice context at a time: joining or starting a call leaves the one the user was in."""
    for live in others:
        if live.state_of(user_id) == "joined":
            await transitions.leave(uow, live, user_id)


async def _display_name(conn: AsyncConnection, user_id: int) -> str:
    user = await select_user(conn, user_id)
    return "" if user is None else str(user["display_name"])


async def do_start_call(rt: Runtime, principal: Principal, raw_channel_id: str, media: str) -> dict[str, Any]:
    """Ring the conversation: the caller joined (microphone on, camera on for video), everyone else ringing;
    CALL_CREATE to the participants. 409 `call.already_exists` (with `call_id`) while one is ongoing."""
    me = principal.user_id
    async with rt.uow() as uow:
        conv = await _access_locked(uow, principal, raw_channel_id)
        check_voice_enabled(rt.settings)
        await check_call_not_blocked(uow.conn, conv, me)
        existing, others = await _lock_calls(uow, conv, me)
        if existing is not None:
            raise AppError("call.already_exists", call_id=str(existing.id))
        await _leave_other_calls(uow, others, me)
        live = await create_call_rows(uow, conv, me, media)
        uow.emit(notify_call(EventType.CALL_CREATE, live.view(), live.audience))
        joined = InCall(live.view(), me, await _display_name(uow.conn, me))
    await announce_voice_context_taken(rt, me)
    return _answer(rt, joined, rt.clock.now())


async def create_call_rows(uow: UnitOfWork, conv: Conversation, initiator_id: int, media: str) -> LiveCall:
    """The call and one entry per participant (no event); 409 `call.already_exists` when one is ongoing."""
    call = {"id": uow.next_id(), "channel_id": conv.channel_id, "initiator_id": initiator_id, "status": "ringing",
            "media": media, "ongoing_channel_id": conv.channel_id, "created_at": uow.now, "started_at": None,
            "ended_at": None, "end_reason": None}
    try:
        # The unique ongoing_channel_id decides between concurrent starts, in a savepoint so we can still look.
        async with uow.conn.begin_nested():
            await queries.insert_call(uow.conn, call)
    except IntegrityError:
        ongoing = await queries.select_ongoing_call(uow.conn, conv.channel_id)
        raise AppError("call.already_exists", call_id=None if ongoing is None else str(ongoing["id"])) from None
    participants: dict[int, dict[str, Any]] = {}
    for uid in conv.participant_ids:
        mine = uid == initiator_id
        participants[uid] = {
            "call_id": call["id"], "user_id": uid, "state": "joined" if mine else "ringing", "microphone": mine,
            "camera": mine and media == "video", "screen": False, "joined_at": uow.now if mine else None,
            "left_at": None}
    await queries.insert_call_participants(uow.conn, list(participants.values()))
    return LiveCall(call, participants, tuple(conv.participant_ids))


async def _access_ongoing(uow: UnitOfWork, principal: Principal, raw_channel_id: str
                          ) -> tuple[Conversation, LiveCall, list[LiveCall]]:
    conv = await _access_locked(uow, principal, raw_channel_id)
    live, others = await _lock_calls(uow, conv, principal.user_id)
    if live is None:
        raise AppError("call.not_found")
    return conv, live, others


async def do_join_call(rt: Runtime, principal: Principal, raw_channel_id: str) -> dict[str, Any]:
    """Join the ongoing call (again, after leaving, or for the first time when added to the group since it
    started); already joined: the same answer with a fresh token and no event."""
    me = principal.user_id
    async with rt.uow() as uow:
        conv, live, others = await _access_ongoing(uow, principal, raw_channel_id)
        check_voice_enabled(rt.settings)
        await check_call_not_blocked(uow.conn, conv, me)
        if live.state_of(me) != "joined":
            await _leave_other_calls(uow, others, me)
            await transitions.join(uow, live, me)
        joined = InCall(live.view(), me, await _display_name(uow.conn, me))
    await announce_voice_context_taken(rt, me)
    return _answer(rt, joined, rt.clock.now())


async def _change(rt: Runtime, principal: Principal, raw_channel_id: str, required: str, change: Any
                  ) -> dict[str, Any]:
    """Apply `change(uow, live)` when the caller's participant state is `required`, else 409."""
    async with rt.uow() as uow:
        _, live, _ = await _access_ongoing(uow, principal, raw_channel_id)
        if live.state_of(principal.user_id) != required:
            raise AppError("call.invalid_state", f"Only a {required} participant can do this")
        await change(uow, live)
        return {"call": live.view()}


async def do_decline_call(rt: Runtime, principal: Principal, raw_channel_id: str) -> dict[str, Any]:
    async def change(uow: UnitOfWork, live: LiveCall) -> None:
        await transitions.decline(uow, live, principal.user_id)
    return await _change(rt, principal, raw_channel_id, "ringing", change)


async def do_leave_call(rt: Runtime, principal: Principal, raw_channel_id: str) -> dict[str, Any]:
    async def change(uow: UnitOfWork, live: LiveCall) -> None:
        await transitions.leave(uow, live, principal.user_id)
    return await _change(rt, principal, raw_channel_id, "joined", change)


async def do_update_call_flags(rt: Runtime, principal: Principal, raw_channel_id: str, flags: dict[str, bool]
                               ) -> dict[str, Any]:
    async def change(uow: UnitOfWork, live: LiveCall) -> None:
        await transitions.set_flags(uow, live, principal.user_id, flags)
    return await _change(rt, principal, raw_channel_id, "joined", change)


async def do_leave_joined_calls(rt: Runtime, user_id: int) -> None:
    """One voice context at a time: joining a guild voice room leaves the call the user is joined in, with
    that call's usual consequences."""
    async with rt.read() as uow:
        joined = await select_joined_calls(uow.conn, user_id)
    for _, channel_id in joined:
        await do_leave_call_room(rt, channel_id, user_id)


async def do_leave_call_room(rt: Runtime, channel_id: int, user_id: int | None) -> bool:
    """The user (None: everybody) is no longer in the media-server room of the conversation's ongoing call
    (a media-server webhook, or a guild voice room joined): joined participants leave. Whether it changed."""
    async with rt.uow() as uow:
        await queries.lock_conversation(uow.conn, channel_id)
        call = await queries.select_ongoing_call(uow.conn, channel_id)
        if call is None:
            return False
        audience = tuple(p["user_id"] for p in await select_participants(uow.conn, channel_id))
        lives = await load_live_calls(uow.conn, [call["id"]], {channel_id: audience})
        if not lives:
            return False
        live = lives[0]
        changed = False
        for uid in [user_id] if user_id is not None else live.in_state("joined"):
            if live.ongoing and live.state_of(uid) == "joined":
                await transitions.leave(uow, live, uid)
                changed = True
        return changed


async def joined_by_call_room(rt: Runtime, channel_id: int | None = None) -> dict[str, set[int]]:
    """Media-server room -> who may be in it: the joined participants of each ongoing call (of that
    conversation's, with `channel_id`); the voice rooms remove anyone else (docs/voice.md)."""
    async with rt.read() as uow:
        rows = await queries.select_joined_participants(uow.conn, channel_id)
    out: dict[str, set[int]] = {}
    for _, channel_id, user_id, _ in rows:
        out.setdefault(call_room(channel_id), set()).add(user_id)
    return out


async def access_call(rt: Runtime, principal: Principal, raw_channel_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        conv = await access_conversation_or_wrong_type(uow.conn, principal, raw_channel_id, uow.now)
        call = await queries.select_ongoing_call(uow.conn, conv.channel_id)
        if call is None:
            raise AppError("call.not_found")
        parts = await queries.select_participants_of_calls(uow.conn, [call["id"]])
        return {"call": call_view(call, parts.get(call["id"], []))}


async def access_call_history(rt: Runtime, principal: Principal, raw_channel_id: str, page: Page) -> dict[str, Any]:
    """The conversation's calls, newest first, the ongoing one included."""
    async with rt.read() as uow:
        conv = await access_conversation_or_wrong_type(uow.conn, principal, raw_channel_id, uow.now)
        rows = await queries.select_call_page(uow.conn, conv.channel_id, page.before, page.limit)
        rows, has_more = rows[:page.limit], len(rows) > page.limit
        parts = await queries.select_participants_of_calls(uow.conn, [r["id"] for r in rows])
        return {"calls": [call_view(r, parts.get(r["id"], [])) for r in rows], "has_more": has_more}


async def ready_calls(conn: AsyncConnection, user_id: int) -> list[dict[str, Any]]:
    """READY `calls`: the ongoing calls of the user's conversations, in two queries whatever their number."""
    rows = await queries.select_ongoing_calls_of_user(conn, user_id)
    parts = await queries.select_participants_of_calls(conn, [r["id"] for r in rows])
    return [call_view(r, parts.get(r["id"], [])) for r in rows]
