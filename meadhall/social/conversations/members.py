"""Adding and removing participants, and leaving (OpenAPI: addRecipient, removeRecipient; deleteChannel on a
conversation), with the transitions of docs/social.md: a one-to-one conversation that gains a third
participant becomes a group; a group of three that loses one becomes a one-to-one conversation again;
a conversation of two that one leaves is deleted with its messages and their files."""

from __future__ import annotations

from meadhall.accounts.imported import refuse_imported
from meadhall.accounts.queries import select_users_by_ids
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import parse_id
from meadhall.db.uow import UnitOfWork
from meadhall.files.cleanup import drop_channel_files, drop_files
from meadhall.realtime.events import EventType
from meadhall.runtime import Runtime
from meadhall.social.blocks import check_not_blocked
from meadhall.social.conversations import queries
from meadhall.social.conversations.access import Conversation, access_conversation_or_wrong_type
from meadhall.social.conversations.events import notify_conversation_delete
from meadhall.social.conversations.hooks import ParticipantsLeft, announce_participants_left
from meadhall.social.conversations.service import (
    MAX_PARTICIPANTS,
    announce,
    built_name,
    locked,
    own_view,
    reload,
    select_live_users,
    user_id_of,
)
from meadhall.social.conversations.views import ConversationView


async def do_add_recipient(rt: Runtime, principal: Principal, raw_channel_id: str, raw_user_id: str
                           ) -> ConversationView:
    """Any participant adds a user (no block between adder and added, nor between the two of a 1:1; at most
    10 participants). Adding a participant again changes nothing. DM_CHANNEL_UPDATE to the previous
    participants, DM_CHANNEL_CREATE to the added user."""
    me = principal.user_id
    async with rt.uow() as uow:
        conv = await access_conversation_or_wrong_type(uow.conn, principal, raw_channel_id, uow.now)
        conv = await locked(uow, conv, me)
        added = user_id_of(raw_user_id)
        users = {**await select_live_users(uow.conn, [added]),
                 **await select_users_by_ids(uow.conn, conv.participant_ids)}
        refuse_imported(users[added])
        if conv.has(added):
            return await own_view(uow, conv, me)
        if not conv.is_group and any(users[uid]["deleted_at"] is not None for uid in conv.participant_ids
                                     if uid in users):
            # A one-to-one conversation with a deleted account is kept only to be read (docs/admin.md).
            raise permission_denied(None, "The other participant's account was deleted")
        if not conv.is_group:
            # A blocked pair's 1:1 never becomes a group: a third person would let their writes reach the
            # blocker again (docs/social.md "Blocks in a one-to-one conversation").
            first, second = conv.participant_ids
            await check_not_blocked(uow.conn, first, second)
        await check_not_blocked(uow.conn, me, added)
        if len(conv.participants) >= MAX_PARTICIPANTS:
            raise AppError("dm.full")
        if not conv.is_group:
            # A one-to-one conversation becomes a group: same id, the adder owns it, the name is built.
            await queries.update_conversation_row(uow.conn, conv.channel_id, {
                "is_group": True, "dm_owner_id": me, "dm_pair": None,
                "name": built_name([*conv.participant_ids, added], users, uow)})
        await queries.insert_participants(uow.conn, conv.channel_id, [added], uow.now)
        fresh = await reload(uow, conv.channel_id)
        await announce(uow, EventType.DM_CHANNEL_UPDATE, fresh, conv.participant_ids)
        await announce(uow, EventType.DM_CHANNEL_CREATE, fresh, [added])
        return await own_view(uow, fresh, me)


def _target(raw_user_id: str, me: int) -> int | None:
    return me if raw_user_id == "@me" else parse_id(raw_user_id)


async def do_remove_recipient(rt: Runtime, principal: Principal, raw_channel_id: str, raw_user_id: str) -> None:
    """Anyone removes themself (`@me`); the owner of a group removes others; in a one-to-one conversation
    only leaving is possible (422 `dm.not_group`)."""
    me = principal.user_id
    async with rt.uow() as uow:
        conv = await locked(uow, await access_conversation_or_wrong_type(uow.conn, principal, raw_channel_id,
                                                                         uow.now), me)
        target = _target(raw_user_id, me)
        if target is None or not conv.has(target):
            raise AppError("recipient.not_found")
        if target != me:
            if not conv.is_group:
                raise AppError("dm.not_group", "In a one-to-one conversation you can only leave")
            if conv.owner_id != me:
                raise permission_denied(None, "Only the owner of the group removes others")
        await do_drop_participant(rt, uow, conv, target)


async def do_drop_participant(rt: Runtime, uow: UnitOfWork, conv: Conversation, removed: int) -> None:
    """`removed` leaves or is removed (also DELETE /channels/{id} on a conversation, which is leaving it).
    DM_CHANNEL_DELETE to the removed user, DM_CHANNEL_UPDATE to the rest; or, when fewer than two would
    remain, the conversation goes with its messages and files and DM_CHANNEL_DELETE reaches both."""
    remaining = [u for u in conv.participant_ids if u != removed]
    deleted = len(remaining) < 2
    # Before any row goes: an ongoing call ends in this transaction (calls register the hook).
    await announce_participants_left(uow, ParticipantsLeft(
        conv.channel_id, (removed,), deleted, () if deleted else tuple(remaining), tuple(conv.participant_ids)))
    if deleted:
        await drop_channel_files(uow, rt.files, conv.channel_id)
        await queries.delete_conversation_row(uow.conn, conv.channel_id)
        uow.emit(notify_conversation_delete(conv.channel_id, conv.participant_ids))
        return
    await queries.delete_participant(uow.conn, conv.channel_id, removed)
    if len(remaining) == 2:
        # A group of three that loses one is a one-to-one conversation again: no name, owner or icon.
        await drop_files(uow, rt.files, [conv.channel["icon_file_id"]])
        await queries.update_conversation_row(uow.conn, conv.channel_id, {
            "is_group": False, "name": None, "dm_owner_id": None, "icon_file_id": None,
            "dm_pair": queries.pair_key(remaining[0], remaining[1])})
    elif conv.owner_id == removed:
        # Participants are ordered earliest joined first: the next owner is the first who remains.
        await queries.update_conversation_row(uow.conn, conv.channel_id, {"dm_owner_id": remaining[0]})
    uow.emit(notify_conversation_delete(conv.channel_id, [removed]))
    await announce(uow, EventType.DM_CHANNEL_UPDATE, await reload(uow, conv.channel_id), remaining)
