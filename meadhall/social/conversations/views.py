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

from meadhall.accounts.queries import UserRow, select_users_by_ids
from meadhall.accounts.views import user_summary
from meadhall.auth.sessions import Principal
from meadhall.core.clock import iso
from meadhall.guilds.views import sid
from meadhall.messages import queries as message_queries
from meadhall.messages.hydrate import hydrate
from meadhall.runtime import Runtime
from meadhall.social.conversations import queries
from meadhall.social.conversations.access import Conversation


def conversation_view(conv: Conversation, receiver_id: int, summaries: Mapping[int, dict[str, Any]],
                      last_message: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
    """`summaries`: UserSummary of the participants (a participant without one is left out), made once per
    user for a whole list: the receiver and a friend in many groups appear in many conversations."""
    channel = conv.channel
    members = [summaries[uid] for uid in conv.participant_ids if uid in summaries]
    counterpart = None
    if not conv.is_group:
        counterpart = next((m for m in members if m["id"] != str(receiver_id)), None)
    owner = sid(channel["dm_owner_id"]) if conv.is_group else None
    return {
        "id": str(channel["id"]),
        "type": "dm",
        "guild_id": None,
        "is_group": conv.is_group,
        "name": channel["name"] if conv.is_group else None,
        "icon_file_id": sid(channel["icon_file_id"]) if conv.is_group else None,
        "dm_owner_id": owner,
        "owner_id": owner,
        "member_count": len(conv.participants),
        "members": members,
        "counterpart": counterpart,
        "avatar": None if counterpart is None else counterpart["avatar"],
        "status": None if counterpart is None else counterpart["status"],
        "last_message": last_message,
        "last_message_id": None if last_message is None else last_message["id"],
        "created_at": iso(channel["created_at"]),
    }


def _last_id(conv: Conversation, private: Mapping[int, int]) -> int | None:
    public = conv.channel["last_message_id"]
    mine = private.get(conv.channel_id)
    candidates = [i for i in (public, mine) if i is not None]
    return max(candidates) if candidates else None


async def conversation_views(conn: AsyncConnection, receiver_id: int, convs: Sequence[Conversation], now: datetime,
                             users: Mapping[int, UserRow] | None = None) -> list[dict[str, Any]]:
    """The receiver's views of these conversations, in the given order."""
    if not convs:
        return []
    if users is None:
        users = await select_users_by_ids(conn, {uid for c in convs for uid in c.participant_ids})
    private = await queries.select_newest_private_ids(
        conn, [c.channel_id for c in convs if c.channel["has_private"]], receiver_id)
    last_ids = {c.channel_id: _last_id(c, private) for c in convs}
    rows = await message_queries.select_messages_in_rooms(
        conn, [(cid, mid) for cid, mid in last_ids.items() if mid is not None])
    ordered = sorted(rows.values(), key=lambda r: r["id"])
    shown = await hydrate(conn, ordered, receiver_id, now, known_users=dict(users))
    by_id = {int(view["id"]): view for view in shown}
    summaries = {uid: user_summary(row, now) for uid, row in users.items()}
    out = []
    for conv in convs:
        last_id = last_ids[conv.channel_id]
        out.append(conversation_view(conv, receiver_id, summaries, None if last_id is None else by_id.get(last_id),
                                     now))
    return out


async def conversation_list(conn: AsyncConnection, user_id: int, now: datetime) -> list[dict[str, Any]]:
    """Every conversation of the user, newest activity first (GET /users/@me/channels, READY)."""
    channels = await queries.select_conversations_of_user(conn, user_id)
    if not channels:
        return []
    participants = await queries.select_participants_of_user_conversations(conn, user_id)
    convs = [Conversation(ch, participants.get(int(ch["id"]), [])) for ch in channels]
    views = await conversation_views(conn, user_id, convs, now)
    return sorted(views, key=_activity, reverse=True)


async def access_conversations(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        return {"channels": await conversation_list(uow.conn, principal.user_id, uow.now)}


def _activity(view: dict[str, Any]) -> int:
    return max(int(view["last_message_id"] or 0), int(view["id"]))


async def views_for(conn: AsyncConnection, conv: Conversation, receivers: Sequence[int], now: datetime
                    ) -> dict[int, dict[str, Any]]:
    """Each receiver's own view of one conversation (events: DM_CHANNEL_CREATE / UPDATE)."""
    users = await select_users_by_ids(conn, conv.participant_ids)
    return {r: (await conversation_views(conn, r, [conv], now, users))[0] for r in receivers}
