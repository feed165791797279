"""Members of a guild: joining and leaving (shared by invitations, public servers, leave, kick and ban),
list, read, nicknames and timeouts (OpenAPI: listMembers, updateMember), and the Member payloads shared
with the role and moderation services."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts import queries as account_queries
from meadhall.accounts.views import user_summary
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.clock import as_utc, iso
from meadhall.core.errors import AppError, permission_denied, validation_error
from meadhall.core.ids import parse_id
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.access import GuildContext, access_guild, member_context, require
from meadhall.guilds.events import notify_guild_create, notify_guild_delete
from meadhall.guilds.hooks import GuildNotice, NoticeType, access_changed, announce_in_room
from meadhall.guilds.members import queries as member_queries
from meadhall.guilds.members.audiences import profile_audiences
from meadhall.guilds.members.events import notify_member, notify_member_remove
from meadhall.guilds.members.views import MemberView, member_view
from meadhall.guilds.rows import GuildRow, MemberRow
from meadhall.guilds.snapshot import snapshot_of
from meadhall.guilds.styles.views import guild_style_views, user_guild_style_views
from meadhall.realtime.audience import guild_members
from meadhall.realtime.events import EventType
from meadhall.runtime import Runtime

P = perms.P
MAX_TIMEOUT = timedelta(days=28)


# ---- joining and leaving (invitations, public servers, leave, kick, ban) -------------------------

MAX_MEMBERSHIPS = 200


async def check_membership_limit(uow: UnitOfWork, user_id: int) -> None:
    if await member_queries.count_memberships(uow.conn, user_id) >= MAX_MEMBERSHIPS:
        raise AppError("guild.limit_reached")


async def do_add_member(uow: UnitOfWork, guild: GuildRow, user_id: int, via: str) -> None:
    """Insert the membership; MEMBER_ADD to members (the joiner included), GUILD_CREATE to the joiner,
    system message `member_join` in the system room."""
    await check_membership_limit(uow, user_id)
    conn = uow.conn
    await member_queries.insert_member(conn, {"guild_id": guild["id"], "user_id": user_id, "nick": None, "nick_norm": None,
                                       "joined_at": uow.now, "timeout_until": None})
    await guild_queries.update_member_count(conn, guild["id"], 1)
    user = await account_queries.select_user(conn, user_id)
    member = await member_queries.select_member(conn, guild["id"], user_id)
    assert user is not None and member is not None
    audience = await guild_members(conn, guild["id"])
    uow.emit(notify_member(EventType.MEMBER_ADD, member_view(member, user, [], uow.now), audience))
    # As in READY: an instance administrator's snapshot lists every room (they view them all).
    snapshot = await snapshot_of(uow, guild["id"], user_id, bool(user["is_instance_admin"]))
    uow.emit(notify_guild_create(snapshot, [user_id]))
    await announce_in_room(uow, GuildNotice(guild["id"], guild["system_channel_id"], "member_join", user_id,
                                            user["display_name"], via=via))


async def do_remove_member(uow: UnitOfWork, guild: GuildRow, user_id: int, reason: str,
                           actor_id: int | None = None) -> None:
    """Remove the membership (its roles go with it); MEMBER_REMOVE to the remaining members,
    GUILD_DELETE with the reason (`left`, `kicked`, `banned`) to the removed user, system message."""
    user = await do_end_membership(uow, guild["id"], user_id)
    uow.emit(notify_guild_delete(guild["id"], reason, [user_id]))
    notices: dict[str, NoticeType] = {"left": "member_leave", "kicked": "member_kick", "banned": "member_ban"}
    system_type = notices[reason]
    await announce_in_room(uow, GuildNotice(guild["id"], guild["system_channel_id"], system_type, user_id,
                                            user["display_name"], actor_id=actor_id))


async def do_end_membership(uow: UnitOfWork, guild_id: int, user_id: int) -> account_queries.UserRow:
    """The membership goes (its roles with it) and the remaining members get MEMBER_REMOVE; nothing else.
    Alone, this is how the soft deletion of an account ends its memberships (docs/admin.md): no system
    message, and no GUILD_DELETE since the account has no session left to hear it."""
    conn = uow.conn
    if not await member_queries.delete_member_row(conn, guild_id, user_id):
        raise AppError("member.not_found")
    await guild_queries.update_member_count(conn, guild_id, -1)
    user = await account_queries.select_user(conn, user_id)
    assert user is not None
    remaining = await guild_members(conn, guild_id)
    uow.emit(notify_member_remove(guild_id, user_summary(user, uow.now), remaining))
    return user


# ---- payloads shared with roles and bans -------------------------------------------------------


async def member_views(conn: AsyncConnection, guild_id: int, user_ids: Iterable[int], now: datetime
                       ) -> dict[int, MemberView]:
    """user id -> Member object, for the given members, in two queries."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    rows = await member_queries.select_members_with_users(conn, guild_id, user_ids=ids, limit=len(ids))
    held = await member_queries.select_role_ids_by_member(conn, guild_id, ids)
    styles = await guild_style_views(conn, guild_id, ids)
    return {r.member["user_id"]: member_view(r.member, r.user, held.get(r.member["user_id"], []), now,
                                             style=styles.get(r.member["user_id"])) for r in rows}


async def emit_member_updates(uow: UnitOfWork, guild_id: int, user_ids: Iterable[int]) -> dict[int, MemberView]:
    """MEMBER_UPDATE to every member, one per changed member; returns the payloads."""
    views = await member_views(uow.conn, guild_id, user_ids, uow.now)
    if views:
        audience = await guild_members(uow.conn, guild_id)
        for view in views.values():
            uow.emit(notify_member(EventType.MEMBER_UPDATE, view, audience))
    return views


async def announce_profile_to_guilds(uow: UnitOfWork, user: account_queries.UserRow) -> None:
    """A user's public profile changed (`user`: their row as just written): MEMBER_UPDATE in every guild they
    belong to, read for all of them in one query (a member of 100 servers changing their custom status would
    otherwise pay 300) and kept under the guilds' versions (guilds/members/audiences.py: the change writes the
    users row alone), one more when the user has personal styles (`style_count`), three when guild ones."""
    user_id, now = user["id"], uow.now
    guilds = await profile_audiences(uow.conn, user_id)
    if not guilds:
        return
    summary = user_summary(user, now)  # the same user in every guild: made once
    # kept by trigger: see derived registry "style_count"
    styles = await user_guild_style_views(uow.conn, user_id) if user["style_count"] else {}
    uow.emit(*[notify_member(EventType.MEMBER_UPDATE,
                             member_view(g.membership, user, g.role_ids, now, summary=summary,
                                         style=styles.get(g.guild_id)),
                             g.members)
               for g in guilds if g.membership is not None])


async def load_target(uow: UnitOfWork, gc: GuildContext, user_id: int | None
                      ) -> tuple[perms.MemberContext, MemberRow]:
    """A member of this guild as the target of a moderation action; 404 `member.not_found`.

    As a target an instance administrator has their ordinary rank (the bypass is for acting)."""
    member = None if user_id is None else await member_queries.select_member(uow.conn, gc.guild_id, user_id)
    if member is None or user_id is None:
        raise AppError("member.not_found")
    role_ids = await member_queries.select_member_role_ids(uow.conn, gc.guild_id, user_id)
    return member_context(user_id, False, gc.guild, member, role_ids, uow.now), member


def _target_id(principal: Principal, raw: str) -> int | None:
    return principal.user_id if raw == "@me" else parse_id(raw)


# ---- reads -------------------------------------------------------------------------------------


async def access_members(rt: Runtime, principal: Principal, raw_guild_id: str, after: str | None, limit: int,
                       q: str | None) -> dict[str, Any]:
    """User id ascending from `after`; `q` is a case-insensitive prefix of username, display name or nick."""
    after_id = None
    if after is not None:
        after_id = parse_id(after)
        if after_id is None:
            raise validation_error("after", "must be an id")
    query_norm = norm(q.strip()) if q and q.strip() else None
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        rows = await member_queries.select_members_with_users(uow.conn, gc.guild_id, after=after_id, limit=limit + 1,
                                                query_norm=query_norm)
        page = rows[:limit]
        held = await member_queries.select_role_ids_by_member(uow.conn, gc.guild_id, [r.member["user_id"] for r in page]) if page else {}
        styles = await guild_style_views(uow.conn, gc.guild_id, [r.member["user_id"] for r in page])
    return {
        "members": [member_view(r.member, r.user, held.get(r.member["user_id"], []), uow.now,
                                style=styles.get(r.member["user_id"])) for r in page],
        "has_more": len(rows) > limit,
    }


async def access_member_view(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str) -> dict[str, Any]:
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        user_id = _target_id(principal, raw_user_id)
        views = {} if user_id is None else await member_views(uow.conn, gc.guild_id, [user_id], uow.now)
    if user_id not in views:
        raise AppError("member.not_found")
    return {"member": views[user_id]}


# ---- nickname and timeout ----------------------------------------------------------------------


def _check_timeout_value(fields: dict[str, Any], now: datetime) -> None:
    until = fields.get("timeout_until")
    if until is None:
        return
    if until <= now:
        raise validation_error("timeout_until", "must be in the future")
    if until > now + MAX_TIMEOUT:
        raise validation_error("timeout_until", "must be at most 28 days from now")


def _check_nick(gc: GuildContext, target: perms.MemberContext) -> None:
    if target.user_id == gc.actor.user_id:
        require(gc, P.CHANGE_NICKNAME)
        return
    require(gc, P.MANAGE_NICKNAMES)
    if not perms.can_act_on(gc.actor, target, gc.roles):
        raise permission_denied(None, "You can only change the nickname of members ranked below you")


def _check_timeout(gc: GuildContext, target: perms.MemberContext) -> None:
    require(gc, P.MODERATE_MEMBERS)
    if target.user_id == gc.actor.user_id:
        raise permission_denied(None, "You cannot time yourself out")
    if target.is_owner:
        raise permission_denied(None, "The owner cannot be timed out")
    if perms.base_permissions(target, gc.roles) & P.ADMINISTRATOR:
        raise permission_denied(None, "Members with ADMINISTRATOR cannot be timed out")
    if not perms.can_timeout(gc.actor, target, gc.roles):
        raise permission_denied(None, "You can only time out members ranked below you")


async def do_update_member(rt: Runtime, principal: Principal, raw_guild_id: str, raw_user_id: str,
                        fields: dict[str, Any]) -> dict[str, Any]:
    """PATCH a member (`@me` for oneself): `nick` and/or `timeout_until`, each with its own rule."""
    async with rt.uow() as uow:
        _check_timeout_value(fields, uow.now)
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        target, member = await load_target(uow, gc, _target_id(principal, raw_user_id))
        if "nick" in fields:
            _check_nick(gc, target)
        if "timeout_until" in fields:
            _check_timeout(gc, target)
        if await _apply(uow, gc, principal, member, fields):
            views = await emit_member_updates(uow, gc.guild_id, [target.user_id])
        else:
            views = await member_views(uow.conn, gc.guild_id, [target.user_id], uow.now)
    if fields.get("timeout_until") is not None:
        await access_changed(rt, gc.guild_id)  # a timeout disconnects from voice
    return {"member": views[target.user_id]}


async def _apply(uow: UnitOfWork, gc: GuildContext, principal: Principal, member: MemberRow,
                 fields: dict[str, Any]) -> bool:
    """Write and audit the changes; True when something visible changed (MEMBER_UPDATE is due)."""
    user_id, visible = member["user_id"], False
    values: dict[str, Any] = {}
    audit: dict[str, Any] = {"actor_id": principal.user_id, "target_type": "user", "target_id": user_id,
                             "guild_id": gc.guild_id}
    if "nick" in fields and fields["nick"] != member["nick"]:
        nick = fields["nick"]
        values.update(nick=nick, nick_norm=None if nick is None else norm(nick))
        visible = True
        if user_id != principal.user_id:
            await record(uow, "member.nick_update", **audit, data={"changes": {"nick": [member["nick"], nick]}})
    if "timeout_until" in fields:
        stored = as_utc(member["timeout_until"])
        until = as_utc(fields["timeout_until"])
        if stored != until:
            values["timeout_until"] = until
        active = stored if stored is not None and stored > uow.now else None
        if active != until:
            visible = True
            action = "member.timeout" if until is not None else "member.timeout_clear"
            await record(uow, action, **audit, data={"timeout_until": iso(until), "previous": iso(active)})
    if values:
        await member_queries.update_member_row(uow.conn, gc.guild_id, user_id, values)
    return visible
