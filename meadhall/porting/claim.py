"""`meadhall claim-imported`: hand an imported author's history to the local account of the person who wrote
it (docs/imported-authors.md). One transaction moves everything that names the author (messages, mentions,
reactions, memberships with their roles, bans, read marks, what the author made) to the account, deletes the
author and records `instance.user_claim`; open clients are told of the membership changes after the commit."""

from __future__ import annotations

from typing import Any, cast

from meadhall.accounts import queries as account_queries
from meadhall.accounts.imported import refuse_imported
from meadhall.accounts.queries import UserRow
from meadhall.accounts.signin import email_lookup
from meadhall.accounts.views import user_summary
from meadhall.audit.record import record
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.events import notify_guild_create
from meadhall.guilds.members.events import notify_member, notify_member_remove
from meadhall.guilds.members.service import member_views
from meadhall.guilds.snapshot import snapshot_of
from meadhall.porting import claim_queries as q
from meadhall.realtime.audience import guild_members
from meadhall.realtime.events import EventType
from meadhall.runtime import Runtime


async def _imported_author(uow: UnitOfWork, raw_user_id: str) -> UserRow:
    user_id = parse_id(raw_user_id)
    row = None if user_id is None else await q.select_user_locked(uow.conn, user_id)
    if row is None or not row["imported"] or row["deleted_at"] is not None:
        raise AppError("user.not_found", f"No imported author with id {raw_user_id}")
    return cast(UserRow, row)


async def _local_account(rt: Runtime, uow: UnitOfWork, email: str) -> UserRow:
    row = await account_queries.select_user_by_email(uow.conn, email_lookup(rt, email.strip()))
    if row is None or row["deleted_at"] is not None:
        raise AppError("user.not_found", f"No account with email {email}")
    refuse_imported(row)  # unreachable by an email today; the rule does not rest on that
    return row


async def claim_imported(rt: Runtime, raw_user_id: str, email: str) -> dict[str, Any]:
    async with rt.uow() as uow:
        author = await _imported_author(uow, raw_user_id)
        target = await _local_account(rt, uow, email)
        author_id, target_id = author["id"], target["id"]
        guild_ids = await q.select_guild_ids(uow.conn, author_id)
        already = set(await q.select_guild_ids(uow.conn, target_id))
        # A guild that banned the person keeps them out: the history moves, the membership does not.
        banned = await q.select_banned_guild_ids(uow.conn, target_id)
        joined = [g for g in guild_ids if g not in already and g not in banned]
        merged = [g for g in guild_ids if g in already]
        left = [g for g in guild_ids if g in banned and g not in already]
        moved_messages = await q.move_messages(uow.conn, author_id, target_id)
        await q.move_mentions(uow.conn, author_id, target_id)
        await q.move_own_mentions(uow.conn, author_id, target_id)
        await q.move_system_events(uow.conn, author_id, target_id, guild_ids)
        moved_reactions = await q.move_reactions(uow.conn, author_id, target_id)
        await q.move_memberships(uow.conn, author_id, target_id, joined, merged, left)
        await q.move_member_overrides(uow.conn, author_id, target_id)
        await q.move_bans(uow.conn, author_id, target_id)
        await q.move_read_states(uow.conn, author_id, target_id)
        await q.move_authorship(uow.conn, author_id, target_id)
        await q.delete_user(uow.conn, author_id)
        await record(uow, "instance.user_claim", actor_id=None, target_type="user", target_id=target_id,
                     data={"imported_user_id": str(author_id), "messages": moved_messages,
                           "reactions": moved_reactions, "memberships": len(joined) + len(merged)})
        await _announce(uow, author, target, joined, merged, left)
    return {"user_id": str(target_id), "moved": {"messages": moved_messages, "reactions": moved_reactions,
                                                 "memberships": len(joined) + len(merged)}}


async def _announce(uow: UnitOfWork, author: UserRow, target: UserRow, joined: list[int], merged: list[int],
                    left: list[int]) -> None:
    """In every guild of the author: MEMBER_REMOVE of the author, and MEMBER_ADD of the account (with
    GUILD_CREATE to it) where it is new, MEMBER_UPDATE (its merged roles) where it was a member already, nothing
    more where it is banned. Messages already on screen keep showing the author until their room is loaded again."""
    gone = user_summary(author, uow.now)
    for guild_id in left:
        uow.emit(notify_member_remove(guild_id, gone, await guild_members(uow.conn, guild_id)))
    for guild_id in [*joined, *merged]:
        audience = await guild_members(uow.conn, guild_id)
        uow.emit(notify_member_remove(guild_id, gone, audience))
        view = (await member_views(uow.conn, guild_id, [target["id"]], uow.now))[target["id"]]
        uow.emit(notify_member(EventType.MEMBER_ADD if guild_id in joined else EventType.MEMBER_UPDATE, view,
                               audience))
        if guild_id in joined:
            snapshot = await snapshot_of(uow, guild_id, target["id"], bool(target["is_instance_admin"]))
            uow.emit(notify_guild_create(snapshot, [target["id"]]))
