"""The Conversation object (OpenAPI: listConversations, openConversation; READY `dm_channels`), always from
one receiver's point of view: the counterpart of a one-to-one conversation is the other participant, and
the last message is the newest the receiver may see (a `private` message counts only for its two parties).

Any number of conversations is built in a fixed number of statements: participants, their accounts,
the receiver's private last messages (only where a conversation ever held one) and the last messages,
hydrated together like a history page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import select_summary_rows
from meadhall.accounts.views import Summaries, UserColumns, iso_recalled
from meadhall.auth.sessions import Principal
from meadhall.core.ids import sid
from meadhall.messages import queries as message_queries
from meadhall.messages.hydrate import assemble, page_parts
from meadhall.runtime import Runtime
from meadhall.social.conversations import queries
from meadhall.social.conversations.access import Conversation
from meadhall.social.conversations.last_messages import LastMessage, last_message_parts


def conversation_view(conv: Conversation, receiver_id: int, summaries: Mapping[int, dict[str, Any]],
                      last_message: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
    """`summaries`: UserSummary of the participants (a participant without one is left out), made once per
    user for a whole list: the receiver and a friend in many groups appear in many conversations."""
    channel = conv.channel
    participants = conv.participants
    members = [summaries[p["user_id"]] for p in participants if p["user_id"] in summaries]
    is_group = bool(channel["is_group"])
    counterpart = None
    if not is_group:
        receiver = str(receiver_id)
        for member in members:
            if member["id"] != receiver:
                counterpart = member
                break
    owner = sid(channel["dm_owner_id"]) if is_group else None
    return {
        "id": str(channel["id"]),
        "type": "dm",
        "guild_id": None,
        "is_group": is_group,
        "name": channel["name"] if is_group else None,
        "icon_file_id": sid(channel["icon_file_id"]) if is_group else None,
        "dm_owner_id": owner,
        "owner_id": owner,
        "member_count": len(participants),
        "members": members,
        "counterpart": counterpart,
        "avatar": None if counterpart is None else counterpart["avatar"],
        "status": None if counterpart is None else counterpart["status"],
        "last_message": last_message,
        "last_message_id": None if last_message is None else last_message["id"],
        "created_at": iso_recalled(channel["created_at"]),
    }


def _last_id(conv: Conversation, private: Mapping[int, int]) -> int | None:
    public = conv.channel["last_message_id"]
    mine = private.get(conv.channel["id"])
    if mine is None or (public is not None and public > mine):
        return public
    return mine


async def conversation_views(conn: AsyncConnection, receiver_id: int, convs: Sequence[Conversation], now: datetime,
                             users: Mapping[int, UserColumns] | None = None, summaries: Summaries | None = None,
                             *, keep_last: bool = False) -> list[dict[str, Any]]:
    """The receiver's views of these conversations, in the given order. `summaries`: those already made for
    the same answer (READY), filled with the ones made here; `keep_last`: the conversations are all the
    receiver's (a list), whose last messages are kept between requests (conversations.last_messages)."""
    if not convs:
        return []
    if users is None:
        users = await select_summary_rows(conn, {p["user_id"] for c in convs for p in c.participants})
    made = Summaries(now) if summaries is None else summaries
    private = await queries.select_newest_private_ids(
        conn, [c.channel_id for c in convs if c.channel["has_private"]], receiver_id)
    last_ids = [_last_id(c, private) for c in convs]
    if keep_last:
        parts = await last_message_parts(conn, receiver_id, [
            LastMessage(c.channel_id, mid, int(c.channel["message_version"]))
            for c, mid in zip(convs, last_ids, strict=True) if mid is not None])
    else:
        rows = await message_queries.select_messages_in_rooms(
            conn, [(c.channel_id, mid) for c, mid in zip(convs, last_ids, strict=True) if mid is not None])
        parts = await page_parts(conn, [rows[mid] for mid in sorted({m for m in last_ids if m is not None})
                                        if mid in rows])
    shown = await assemble(conn, parts, receiver_id, now, known_users=dict(users), made=made, parts_kept=keep_last)
    by_id = {int(view["id"]): view for view in shown}
    for row in users.values():
        made.of(row)
    return [conversation_view(conv, receiver_id, made, None if last_id is None else by_id.get(last_id), now)
            for conv, last_id in zip(convs, last_ids, strict=True)]


async def conversation_list(conn: AsyncConnection, user_id: int, now: datetime, summaries: Summaries | None = None
                            ) -> list[dict[str, Any]]:
    """Every conversation of the user, newest activity first (GET /users/@me/channels, READY). The
    participants' accounts are selected through the user's own rows rather than by a list of ids (300
    conversations: 300 values to expand and bind); the last messages are mostly kept from the request before."""
    channels = await queries.select_conversations_of_user(conn, user_id)
    if not channels:
        return []
    participants = await queries.select_participants_of_user_conversations(conn, user_id)
    users = await queries.select_participant_summaries(conn, user_id)
    convs = [Conversation(ch, participants.get(int(ch["id"]), [])) for ch in channels]
    views = await conversation_views(conn, user_id, convs, now, users, summaries, keep_last=True)
    return sorted(views, key=_activity, reverse=True)


async def access_conversations(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        return {"channels": await conversation_list(uow.conn, principal.user_id, uow.now)}


def _activity(view: dict[str, Any]) -> int:
    return max(int(view["last_message_id"] or 0), int(view["id"]))


async def views_for(conn: AsyncConnection, conv: Conversation, receivers: Sequence[int], now: datetime
                    ) -> dict[int, dict[str, Any]]:
    """Each receiver's own view of one conversation (events: DM_CHANNEL_CREATE / UPDATE)."""
    users = await select_summary_rows(conn, conv.participant_ids)
    return {r: (await conversation_views(conn, r, [conv], now, users))[0] for r in receivers}
