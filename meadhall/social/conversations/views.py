"""The Conversation object (OpenAPI: listConversations, openConversation; READY `dm_channels`), always from
one receiver's point of view: the counterpart of a one-to-one conversation is the other participant, and
the last message is the newest the receiver may see (a `private` message counts only for its two parties).

Any number of conversations is built in a fixed number of statements: participants, their accounts,
the receiver's private last messages (only where a conversation ever held one) and the last messages,
hydrated together like a history page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any, TypedDict, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import select_summary_rows
from meadhall.accounts.views import Summaries, UserColumns, UserSummaryView, iso_recalled
from meadhall.auth.sessions import Principal
from meadhall.core.ids import sid
from meadhall.guilds.rows import ChannelRow
from meadhall.messages import queries as message_queries
from meadhall.messages.hydrate import assemble, page_parts
from meadhall.messages.views import MessageView
from meadhall.runtime import Runtime
from meadhall.social.conversations import queries
from meadhall.social.conversations.access import Conversation
from meadhall.social.conversations.last_messages import LastMessage, last_message_parts

# Positions in a listed room (queries.LISTED_NAMES): the list reads rooms as tuples.
_ID, _IS_GROUP, _NAME, _ICON, _OWNER, _LAST, _HAS_PRIVATE, _VERSION, _CREATED = range(len(queries.LISTED_NAMES))
Room = Sequence[Any]


class ConversationView(TypedDict):
    """The Conversation object (social.conversations.schemas.Conversation), keys in the order the API writes
    them."""

    id: str
    type: str
    guild_id: None
    is_group: bool
    name: str | None
    icon_file_id: str | None
    dm_owner_id: str | None
    owner_id: str | None
    member_count: int
    members: list[UserSummaryView]
    counterpart: UserSummaryView | None
    avatar: str | None
    status: str | None
    last_message: MessageView | None
    last_message_id: str | None
    created_at: str


def _room(channel: ChannelRow) -> tuple[Any, ...]:
    columns = cast(Mapping[str, Any], channel)
    return tuple(columns[name] for name in queries.LISTED_NAMES)


def _last_id(room: Room, private: Mapping[int, int]) -> int | None:
    public = room[_LAST]
    mine = private.get(room[_ID])
    if mine is None or (public is not None and public > mine):
        return public
    return mine


async def _views(conn: AsyncConnection, receiver_id: int, rooms: Sequence[Room], members: Mapping[int, list[int]],
                 users: Mapping[int, UserColumns], now: datetime, summaries: Summaries | None, *, keep_last: bool
                 ) -> list[tuple[int, ConversationView]]:
    """(activity, view) of each room for the receiver, in the given order: `members` maps a room to its
    participants' ids (earliest joined first), `users` has their accounts. `summaries`: those already made for
    the same answer (READY), filled with the ones made here, each user's made once for the whole answer (the
    receiver and a friend in many groups appear in many conversations); a participant without one is left
    out. `keep_last`: the rooms are all the receiver's (a list), whose last messages are kept between
    requests (conversations.last_messages). Activity: the newest of the room and its shown last message."""
    made = Summaries(now) if summaries is None else summaries
    private = await queries.select_newest_private_ids(
        conn, [room[_ID] for room in rooms if room[_HAS_PRIVATE]], receiver_id)
    last_ids = [_last_id(room, private) for room in rooms]
    if keep_last:
        parts = await last_message_parts(conn, receiver_id, [
            LastMessage(room[_ID], mid, int(room[_VERSION]))
            for room, mid in zip(rooms, last_ids, strict=True) if mid is not None])
    else:
        rows = await message_queries.select_messages_in_rooms(
            conn, [(room[_ID], mid) for room, mid in zip(rooms, last_ids, strict=True) if mid is not None])
        parts = await page_parts(conn, [rows[mid] for mid in sorted({m for m in last_ids if m is not None})
                                        if mid in rows])
    shown = await assemble(conn, parts, receiver_id, now, known_users=users, made=made, parts_kept=keep_last)
    by_id = {view_id: view for view, (view_id, _, _, _) in zip(shown, parts.keys, strict=True)}
    of = made.of
    for row in users.values():
        of(row)
    receiver = str(receiver_id)
    find = made.get
    out: list[tuple[int, ConversationView]] = []
    for room, last_id in zip(rooms, last_ids, strict=True):
        room_id = room[_ID]
        ids = members.get(room_id, ())
        listed = [summary for summary in map(find, ids) if summary is not None]
        last = None if last_id is None else by_id.get(last_id)
        activity = room_id if last_id is None or last is None else max(last_id, room_id)
        is_group = bool(room[_IS_GROUP])
        owner = sid(room[_OWNER]) if is_group else None
        # A one-to-one conversation shows its counterpart: the first participant shown who is not the receiver.
        counterpart = None if is_group else next((m for m in listed if m["id"] != receiver), None)
        out.append((activity, {
            "id": str(room_id), "type": "dm", "guild_id": None, "is_group": is_group,
            "name": room[_NAME] if is_group else None, "icon_file_id": sid(room[_ICON]) if is_group else None,
            "dm_owner_id": owner, "owner_id": owner, "member_count": len(ids), "members": listed,
            "counterpart": counterpart, "avatar": None if counterpart is None else counterpart["avatar"],
            "status": None if counterpart is None else counterpart["status"], "last_message": last,
            "last_message_id": None if last is None else last["id"], "created_at": iso_recalled(room[_CREATED])}))
    return out


async def conversation_views(conn: AsyncConnection, receiver_id: int, convs: Sequence[Conversation], now: datetime,
                             users: Mapping[int, UserColumns] | None = None) -> list[ConversationView]:
    """The receiver's views of these conversations, in the given order."""
    if not convs:
        return []
    if users is None:
        users = await select_summary_rows(conn, {p["user_id"] for c in convs for p in c.participants})
    built = await _views(conn, receiver_id, [_room(c.channel) for c in convs],
                         {c.channel_id: c.participant_ids for c in convs}, users, now, None, keep_last=False)
    return [view for _, view in built]


async def conversation_list(conn: AsyncConnection, user_id: int, now: datetime, summaries: Summaries | None = None
                            ) -> list[ConversationView]:
    """Every conversation of the user, newest activity first (GET /users/@me/channels, READY). The
    participants' accounts are selected through the user's own rows rather than by a list of ids (300
    conversations: 300 values to expand and bind); the last messages are mostly kept from the request before."""
    rooms = await queries.select_conversations_of_user(conn, user_id)
    if not rooms:
        return []
    members = await queries.select_participant_ids_of_user_conversations(conn, user_id)
    users = await queries.select_participant_summaries(conn, user_id)
    built = await _views(conn, user_id, rooms, members, users, now, summaries, keep_last=True)
    built.sort(key=itemgetter(0), reverse=True)
    return [view for _, view in built]


async def access_conversations(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        return {"channels": await conversation_list(uow.conn, principal.user_id, uow.now)}


async def views_for(conn: AsyncConnection, conv: Conversation, receivers: Sequence[int], now: datetime
                    ) -> dict[int, ConversationView]:
    """Each receiver's own view of one conversation (events: DM_CHANNEL_CREATE / UPDATE)."""
    users = await select_summary_rows(conn, conv.participant_ids)
    return {r: (await conversation_views(conn, r, [conv], now, users))[0] for r in receivers}
