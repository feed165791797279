"""Joining and leaving a guild: the rows, counters, events and system messages, shared by invitations,
public servers, leave, kick and ban."""

from __future__ import annotations

from sqlalchemy import RowMapping

from meadhall.accounts import queries as account_queries
from meadhall.accounts.views import user_summary
from meadhall.core.errors import AppError
from meadhall.db.uow import UnitOfWork
from meadhall.guilds import queries
from meadhall.guilds.events import notify_guild_delete, notify_member, notify_member_remove
from meadhall.guilds.snapshot import snapshot_of
from meadhall.guilds.views import member_view
from meadhall.messages.system import post_system_message
from meadhall.realtime.audience import guild_members
from meadhall.realtime.events import event

MAX_MEMBERSHIPS = 200


async def check_membership_limit(uow: UnitOfWork, user_id: int) -> None:
    if await queries.count_memberships(uow.conn, user_id) >= MAX_MEMBERSHIPS:
        raise AppError("guild.limit_reached")


async def do_add_member(uow: UnitOfWork, guild: RowMapping, user_id: int, via: str) -> None:
    """Insert the membership; MEMBER_ADD to members (the joiner included), GUILD_CREATE to the joiner,
    system message `member_join` in the system room."""
    await check_membership_limit(uow, user_id)
    conn = uow.conn
    await queries.insert_member(conn, {"guild_id": guild["id"], "user_id": user_id, "nick": None, "nick_norm": None,
                                       "joined_at": uow.now, "timeout_until": None})
    await queries.add_member_count(conn, guild["id"], 1)
    user = await account_queries.select_user(conn, user_id)
    member = await queries.get_member(conn, guild["id"], user_id)
    assert user is not None and member is not None
    audience = await guild_members(conn, guild["id"])
    uow.emit(notify_member("MEMBER_ADD", member_view(member, user, [], uow.now), audience))
    # As in READY: an instance administrator's snapshot lists every room (they view them all).
    snapshot = await snapshot_of(uow, guild["id"], user_id, bool(user["is_instance_admin"]))
    uow.emit(event("GUILD_CREATE", snapshot, [user_id]))
    await post_system_message(uow, guild_id=guild["id"], channel_id=guild["system_channel_id"],
                              type_="member_join", user_id=user_id, display_name=user["display_name"], via=via)


async def do_remove_member(uow: UnitOfWork, guild: RowMapping, user_id: int, reason: str,
                           actor_id: int | None = None) -> None:
    """Remove the membership (its roles go with it); MEMBER_REMOVE to the remaining members,
    GUILD_DELETE with the reason (`left`, `kicked`, `banned`) to the removed user, system message."""
    conn = uow.conn
    if not await queries.delete_member(conn, guild["id"], user_id):
        raise AppError("member.not_found")
    await queries.add_member_count(conn, guild["id"], -1)
    user = await account_queries.select_user(conn, user_id)
    assert user is not None
    remaining = await guild_members(conn, guild["id"])
    uow.emit(notify_member_remove(guild["id"], user_summary(user, uow.now), remaining))
    uow.emit(notify_guild_delete(guild["id"], reason, [user_id]))
    system_type = {"left": "member_leave", "kicked": "member_kick", "banned": "member_ban"}[reason]
    await post_system_message(uow, guild_id=guild["id"], channel_id=guild["system_channel_id"],
                              type_=system_type, user_id=user_id, display_name=user["display_name"],
                              actor_id=actor_id)
