"""Friend requests, friendships and blocks (docs/social.md, "Relationships and blocking"; OpenAPI:
listRelationships, createRelationship, updateRelationship, deleteRelationship).

Every change locks both users' rows first (queries.select_pair_users), then reads the pair's two rows and
moves them together: a friendship or a pending request has both rows, a block only the blocker's. Events
name one receiver each and are seen from that receiver's side; none tells a blocked user of the block."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from meadhall.accounts.imported import refuse_imported
from meadhall.accounts.presence import friends_styles
from meadhall.accounts.queries import UserRow
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError, validation_error
from meadhall.core.ids import parse_id
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime
from meadhall.social.relationships import queries
from meadhall.social.relationships.events import notify_relationship_add, notify_relationship_remove
from meadhall.social.relationships.queries import RelationshipRow
from meadhall.social.relationships.views import friend_ids, relationship_lists, relationship_view

PENDING_OR_FRIEND = ("friend", "incoming", "outgoing")


async def access_relationships(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        rows = await queries.select_related_users(uow.conn, principal.user_id)
        styles = await friends_styles(uow.conn, friend_ids(rows))
    return relationship_lists(rows, uow.now, styles=styles)


# ---- friend requests ---------------------------------------------------------------------------


async def do_request_by_username(rt: Runtime, principal: Principal, username: str) -> dict[str, Any]:
    """POST: a friend request by login; 201 with `outgoing`, or `friend` when the other had asked first."""
    async with rt.uow() as uow:
        target = await queries.select_live_user_by_username(uow.conn, norm(username))
        if target is None:
            raise AppError("user.not_found")
        if target["id"] == principal.user_id:
            raise validation_error("username", "cannot be your own username")
        refuse_imported(target)
        me, other = await _lock_pair(uow, principal.user_id, target["id"])
        mine, theirs = await queries.select_pair(uow.conn, me["id"], other["id"])
        _check_requestable(mine, theirs)
        if mine is not None:  # friends already, or a request pending either way
            if mine["type"] != "incoming":
                raise AppError("relationship.already_exists")
        return await _befriend(uow, me, other, mine)


async def do_update_relationship(rt: Runtime, principal: Principal, raw_user_id: str, type_: str) -> dict[str, Any]:
    """PUT: `friend` accepts an incoming request or sends one (friends or outgoing already: unchanged);
    `blocked` blocks."""
    async with rt.uow() as uow:
        me, other = await _access_target(uow, principal, raw_user_id)
        mine, theirs = await queries.select_pair(uow.conn, me["id"], other["id"])
        if type_ == "blocked":
            return await _block(uow, me, other, mine, theirs)
        refuse_imported(other)  # blocking one stays possible: it reaches nobody
        _check_requestable(mine, theirs)
        if mine is not None and mine["type"] in ("friend", "outgoing"):
            style = (await friends_styles(uow.conn, [other["id"]])).get(other["id"])
            return relationship_view(other, mine["type"], mine["since"], uow.now, style)
        return await _befriend(uow, me, other, mine)


def _check_requestable(mine: RelationshipRow | None, theirs: RelationshipRow | None) -> None:
    """403 `relationship.blocked` when either of the two blocked the other."""
    if (mine is not None and mine["type"] == "blocked") or (theirs is not None and theirs["type"] == "blocked"):
        raise AppError("relationship.blocked")


async def _befriend(uow: UnitOfWork, me: UserRow, other: UserRow, mine: RelationshipRow | None) -> dict[str, Any]:
    """Accept `other`'s request (mine is `incoming`) or send one (no relation): both rows move, and both
    users hear of it."""
    now = uow.now
    if mine is not None:  # incoming: friends from now on
        mine_type, theirs_type = "friend", "friend"
        await queries.update_relationship_row(uow.conn, me["id"], other["id"], "friend", now)
        await queries.update_relationship_row(uow.conn, other["id"], me["id"], "friend", now)
    else:
        mine_type, theirs_type = "outgoing", "incoming"
        await queries.insert_relationship_row(uow.conn, _row(me["id"], other["id"], "outgoing", now))
        await queries.insert_relationship_row(uow.conn, _row(other["id"], me["id"], "incoming", now))
    styles = await friends_styles(uow.conn, [me["id"], other["id"]]) if mine_type == "friend" else {}
    view = relationship_view(other, mine_type, now, now, styles.get(other["id"]))
    uow.emit(notify_relationship_add(me["id"], view),
             notify_relationship_add(other["id"], relationship_view(me, theirs_type, now, now, styles.get(me["id"]))))
    return view


# ---- blocks and removal ------------------------------------------------------------------------


async def _block(uow: UnitOfWork, me: UserRow, other: UserRow, mine: RelationshipRow | None,
                 theirs: RelationshipRow | None) -> dict[str, Any]:
    """Block `other`: a friendship or request between the two ends (the other is told only that it
    disappeared, with the type they had); a block of theirs stays. Blocking again changes nothing."""
    if mine is not None and mine["type"] == "blocked":
        return relationship_view(other, "blocked", mine["since"], uow.now)
    now = uow.now
    if mine is None:
        await queries.insert_relationship_row(uow.conn, _row(me["id"], other["id"], "blocked", now))
    else:
        await queries.update_relationship_row(uow.conn, me["id"], other["id"], "blocked", now)
    if theirs is not None and theirs["type"] in PENDING_OR_FRIEND:
        await queries.delete_relationship_row(uow.conn, other["id"], me["id"])
        uow.emit(notify_relationship_remove(other["id"], me["id"], theirs["type"]))
    view = relationship_view(other, "blocked", now, now)
    uow.emit(notify_relationship_add(me["id"], view))
    return view


async def do_delete_relationship(rt: Runtime, principal: Principal, raw_user_id: str) -> None:
    """DELETE: remove a friend, decline or cancel a request (both rows go, both users hear), or unblock
    (only the caller's own block row goes, and only the caller hears)."""
    other_id = parse_id(raw_user_id)
    async with rt.uow() as uow:
        if other_id is None or other_id == principal.user_id:
            raise AppError("relationship.not_found")
        await queries.select_pair_users(uow.conn, principal.user_id, other_id)
        mine, theirs = await queries.select_pair(uow.conn, principal.user_id, other_id)
        if mine is None:
            raise AppError("relationship.not_found")
        await queries.delete_relationship_row(uow.conn, principal.user_id, other_id)
        uow.emit(notify_relationship_remove(principal.user_id, other_id, mine["type"]))
        if mine["type"] != "blocked" and theirs is not None and theirs["type"] in PENDING_OR_FRIEND:
            await queries.delete_relationship_row(uow.conn, other_id, principal.user_id)
            uow.emit(notify_relationship_remove(other_id, principal.user_id, theirs["type"]))


# ---- helpers -----------------------------------------------------------------------------------


async def _access_target(uow: UnitOfWork, principal: Principal, raw_user_id: str) -> tuple[UserRow, UserRow]:
    """(the caller, the live user of the path), both locked; 404 `user.not_found`, 422 for oneself."""
    other_id = parse_id(raw_user_id)
    if other_id is None:
        raise AppError("user.not_found")
    if other_id == principal.user_id:
        raise validation_error("user_id", "cannot be your own id")
    return await _lock_pair(uow, principal.user_id, other_id)


async def _lock_pair(uow: UnitOfWork, me_id: int, other_id: int) -> tuple[UserRow, UserRow]:
    rows = await queries.select_pair_users(uow.conn, me_id, other_id)
    other = rows.get(other_id)
    if other is None or other["deleted_at"] is not None:
        raise AppError("user.not_found")
    return rows[me_id], other


def _row(user_id: int, other_id: int, type_: str, since: datetime) -> RelationshipRow:
    return {"user_id": user_id, "other_id": other_id, "type": type_, "since": since}


async def do_drop_relationships(uow: UnitOfWork, user_id: int) -> None:
    """Soft deletion of the account (docs/admin.md): every friendship, request and block naming the user
    goes, both directions. Each other user hears RELATIONSHIP_REMOVE for their own row, as when the pair
    is undone by hand (their own block of the user included: the block has nothing left to act on); the
    deleted account has no session left to tell."""
    rows = await queries.select_rows_involving(uow.conn, user_id)
    await queries.delete_rows_involving(uow.conn, user_id)
    for row in rows:
        if row["user_id"] != user_id:
            uow.emit(notify_relationship_remove(row["user_id"], user_id, row["type"]))
