"""Instance administration's users, the reading side (docs/admin.md, "Users"; OpenAPI: listInstanceUsers,
getInstanceUser), and the lookup every action on one user starts with. The actions live in actions.py."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.accounts.passkeys import queries as passkey_queries
from meadhall.accounts.passkeys.views import passkey_view
from meadhall.accounts.queries import UserRow
from meadhall.accounts.signin import email_lookup, require_step_up
from meadhall.accounts.views import Summaries, security_event_view
from meadhall.admin.access import require_admin
from meadhall.admin.users import queries
from meadhall.admin.users.queries import UserFilter
from meadhall.admin.views import admin_user_views
from meadhall.audit.views import audit_entry_view
from meadhall.auth import queries as auth_queries
from meadhall.auth.sessions import Principal, ttl
from meadhall.auth.views import session_view
from meadhall.core.clock import iso
from meadhall.core.errors import AppError
from meadhall.core.ids import parse_id
from meadhall.db.uow import UnitOfWork
from meadhall.guilds.roles.views import role_view
from meadhall.guilds.views import guild_view
from meadhall.runtime import Runtime

DETAIL_LATEST = 50  # security events and audit entries shown in the detail


async def access_instance_users(rt: Runtime, principal: Principal, q: str | None, email: str | None, banned: bool,
                                before: int | None, limit: int, *, imported: bool = False) -> dict[str, Any]:
    """One page of accounts, newest first, deleted ones included (an administrator must find them); `total`
    counts every match of the filters. At most five queries whatever the page size."""
    require_admin(principal)
    f = UserFilter(q=q or None, email_index=email_lookup(rt, email.strip()) if email is not None else None,
                   banned=banned, imported=imported)
    async with rt.read() as uow:
        # A part of one or two characters has its total kept: read first, as a part no account has then
        # needs no scan for its (empty) page.
        total = await queries.kept_user_count(uow.conn, f)
        rows = [] if total == 0 else await queries.select_user_page(uow.conn, f, before, limit)
        if total is None:
            # A first page that holds every match tells the total: counting again would be a second pass
            # over the same rows.
            total = len(rows) if before is None and len(rows) <= limit else await queries.count_users(uow.conn, f)
        views = await admin_user_views(uow.conn, rows[:limit], rt.keys, uow.now)
    return {"users": views, "total": total, "has_more": len(rows) > limit}


async def load_target(uow: UnitOfWork, raw_user_id: str, *, live: bool = True) -> UserRow:
    """The account an administrator acts on; 404 `user.not_found` when the id is malformed or unknown, and
    (with `live`) when the account was soft-deleted: nothing is left to act on."""
    user_id = parse_id(raw_user_id)
    row = None if user_id is None else await account_queries.select_user(uow.conn, user_id)
    if row is None or (live and row["deleted_at"] is not None):
        raise AppError("user.not_found")
    return row


async def access_target(rt: Runtime, uow: UnitOfWork, principal: Principal, raw_user_id: str) -> UserRow:
    """The checks every action on `/instance/users/{user_id}` starts with, in this order: an administrator
    (403 `perm.denied`), a known account (404), a fresh step-up (403 `auth.step_up_required`). The rules of
    each action come after."""
    require_admin(principal)
    row = await load_target(uow, raw_user_id)
    require_step_up(rt, principal)
    return row


async def access_instance_user(rt: Runtime, principal: Principal, raw_user_id: str) -> dict[str, Any]:
    """Everything an administrator looks at about one account: profile, devices, passkeys, servers with
    the roles held there, the latest security events and audit entries."""
    require_admin(principal)
    async with rt.read() as uow:
        row = await load_target(uow, raw_user_id, live=False)
        user_id = row["id"]
        (view,) = await admin_user_views(uow.conn, [row], rt.keys, uow.now)
        sessions = await auth_queries.select_sessions(uow.conn, user_id)
        passkeys = await passkey_queries.select_user_passkeys(uow.conn, user_id)
        memberships = await queries.select_memberships(uow.conn, user_id)
        held = await queries.select_held_roles(uow.conn, user_id)
        events = (await auth_queries.select_security_events(uow.conn, user_id, None, DETAIL_LATEST))[:DETAIL_LATEST]
        entries = await queries.select_audit_of_user(uow.conn, user_id, DETAIL_LATEST)
        actors = await account_queries.select_summary_rows(
            uow.conn, (e["actor_id"] for e in entries if e["actor_id"] is not None))
        summaries = Summaries(uow.now)
    life = ttl(rt)
    return {
        "user": view,
        "devices": [session_view(s, life, principal.session_id) for s in sessions],
        "passkeys": [passkey_view(p) for p in passkeys],
        "servers": [{"guild": guild_view(g), "roles": [role_view(r) for r in held.get(g["id"], [])],
                     "joined_at": iso(joined_at)} for g, joined_at in memberships],
        "security_events": [security_event_view(e) for e in events],
        "audit_entries": [audit_entry_view(e, summaries.of(actors[e["actor_id"]]) if e["actor_id"] in actors
                                           else None) for e in entries],
    }
