"""Soft deletion of an account by an instance administrator (docs/admin.md "Soft deletion"; OpenAPI:
deleteInstanceUser).

One unit of work does it all, each part by the domain that owns the data: the account (sessions, passkeys,
second factor, avatar, email and password wiped, instance ban lifted, marked deleted), its personal
styles and push subscriptions, its relationships, its conversations (it leaves groups through their
ordinary transitions and any ongoing call; one-to-one conversations keep it so the other can still
read them) and its server memberships (MEMBER_REMOVE, no system message). The audit entry is written in
the same transaction; the media server hears of it only after the commit. Messages and audit entries stay,
the messages showing the deleted user as author. The username stays taken.
"""

from __future__ import annotations

import structlog

from meadhall.accounts.deletion import do_wipe_account, unusable_password_hash
from meadhall.accounts.queries import UserRow, select_user
from meadhall.accounts.signin import require_step_up
from meadhall.admin.access import require_admin
from meadhall.admin.deletion import queries
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import parse_id
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.members.service import do_end_membership
from meadhall.guilds.styles.queries import delete_styles_of
from meadhall.push.queries import delete_subscriptions_of
from meadhall.runtime import Runtime
from meadhall.social.calls import queries as call_queries
from meadhall.social.calls import transitions as call_transitions
from meadhall.social.conversations.access import Conversation, load_conversation
from meadhall.social.conversations.members import do_drop_participant
from meadhall.social.conversations.service import locked
from meadhall.social.relationships.service import do_drop_relationships
from meadhall.voice.service import leave_voice_of

log = structlog.get_logger("meadhall.admin")


async def _access_target(uow: UnitOfWork, raw_user_id: str, *, lock: bool = False) -> UserRow:
    """The account, unless unknown or deleted already (404 `user.not_found`: a deleted account is gone)."""
    user_id = parse_id(raw_user_id)
    if user_id is None:
        raise AppError("user.not_found")
    user = await (queries.select_user_locked if lock else select_user)(uow.conn, user_id)
    if user is None or user["deleted_at"] is not None:
        raise AppError("user.not_found")
    return user


async def check_deletable(uow: UnitOfWork, principal: Principal, user: UserRow) -> None:
    """Not oneself, not an instance administrator (403 `perm.denied`), owner of no server (409)."""
    if user["id"] == principal.user_id:
        raise permission_denied(None, "You cannot delete your own account here")
    if user["is_instance_admin"]:
        raise permission_denied(None, "An instance administrator's account cannot be deleted; remove the role first")
    if await queries.select_owned_guild_ids(uow.conn, user["id"]):
        raise AppError("user.owns_guilds")


async def do_delete_user(rt: Runtime, principal: Principal, raw_user_id: str) -> None:
    require_admin(principal)
    async with rt.read() as uow:
        await check_deletable(uow, principal, await _access_target(uow, raw_user_id))
    require_step_up(rt, principal)
    # Hashed before the write transaction opens (slow); the checks are made again under the lock below.
    password_hash = await unusable_password_hash(rt)
    async with rt.uow() as uow:
        user = await _access_target(uow, raw_user_id, lock=True)
        await check_deletable(uow, principal, user)
        user_id = user["id"]
        # Marked deleted first: every payload below already shows the deleted user.
        await do_wipe_account(rt, uow, user, password_hash)
        await delete_styles_of(uow.conn, user_id)
        await delete_subscriptions_of(uow.conn, user_id)
        await do_drop_relationships(uow, user_id)
        await _leave_conversations(rt, uow, user_id)
        for guild_id in await queries.select_member_guild_ids(uow.conn, user_id):
            await do_end_membership(uow, guild_id, user_id)
        await record(uow, "instance.user_delete", actor_id=principal.user_id, target_type="user",
                     target_id=user_id, data={"username": user["username"]})
    await _leave_voice(rt, user_id)


async def _leave_conversations(rt: Runtime, uow: UnitOfWork, user_id: int) -> None:
    """Groups: the user leaves as anyone does (a group of three becomes a one-to-one conversation, the
    owner passes on; the call hook drops them from an ongoing call). One-to-one conversations keep the
    user, who only leaves their ongoing call."""
    for channel_id in await queries.select_conversation_ids(uow.conn, user_id):
        found = await load_conversation(uow.conn, channel_id)
        if found is None:
            continue
        conv = await locked(uow, found, user_id)
        if conv.is_group:
            await do_drop_participant(rt, uow, conv, user_id)
        else:
            await _leave_call(uow, conv, user_id)


async def _leave_call(uow: UnitOfWork, conv: Conversation, user_id: int) -> None:
    """A joined user leaves the conversation's ongoing call, a ringing one declines it; the call's usual
    consequences follow (an active call with one left ends)."""
    call = await call_queries.select_ongoing_call(uow.conn, conv.channel_id)
    if call is None:
        return
    lives = await call_transitions.load_live_calls(uow.conn, [call["id"]],
                                                   {conv.channel_id: tuple(conv.participant_ids)})
    for live in lives:
        await call_transitions.drop(uow, live, user_id)


async def _leave_voice(rt: Runtime, user_id: int) -> None:
    """After the commit: out of the guild voice room the user was in (VOICE_STATE_UPDATE, media server); the
    calls they left took them out of their media-server rooms themselves. A store or media-server outage must
    not turn the committed deletion into an error answer: the reconciliation job clears what was missed
    (deleted accounts are barred from voice)."""
    if not rt.settings.voice_enabled:
        return
    try:
        await leave_voice_of(rt, user_id)
    except Exception:
        log.exception("leaving voice after account deletion failed", user_id=user_id)
