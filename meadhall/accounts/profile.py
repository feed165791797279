"""Own profile and public user summaries (OpenAPI: getMe, updateMe, getUser)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from meadhall.accounts import queries
from meadhall.accounts.events import notify_user_update
from meadhall.accounts.queries import UserRow
from meadhall.accounts.views import UserSummaryView, security_event_view, user_private, user_summary
from meadhall.auth import queries as auth_queries
from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError
from meadhall.core.hooks import Hook
from meadhall.core.ids import parse_id
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.runtime import Runtime

# What else a change of the public summary announces (docs/reference/events.md: MEMBER_UPDATE to the members of every
# guild of the user). The guilds domain registers its announcement when the app is built, so accounts
# does not import it (guilds builds on accounts).
# A hook gets the user's row as just written, so that none reads it again.
PublicChange = Callable[[UnitOfWork, UserRow], Awaitable[None]]
public_change: Hook[PublicChange] = Hook()


EDITABLE = ("display_name", "bio", "status", "custom_status", "custom_status_emoji", "locale", "timezone")


async def access_me(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        row = await queries.select_user(uow.conn, principal.user_id)
    assert row is not None
    return user_private(row, rt.keys)


async def do_update_me(rt: Runtime, principal: Principal, changes: dict[str, Any], *, onboarding: bool = False
                    ) -> dict[str, Any]:
    """Apply validated profile changes (only the editable fields); emits USER_UPDATE."""
    values = {k: v for k, v in changes.items() if k in EDITABLE}
    for nullable in ("custom_status", "custom_status_emoji"):
        if values.get(nullable) == "":
            values[nullable] = None
    if "display_name" in values:
        values["display_name_norm"] = norm(values["display_name"])
    async with rt.uow() as uow:
        row = await queries.select_user(uow.conn, principal.user_id)
        assert row is not None
        if onboarding and row["onboarding_completed_at"] is None:
            values["onboarding_completed_at"] = uow.now
        if values:
            before = user_summary(row, uow.now)
            row = await queries.update_user_returning(uow.conn, principal.user_id, values)
            assert row is not None
            private = user_private(row, rt.keys)
            uow.emit(notify_user_update(row, rt.keys, private))
            if user_summary(row, uow.now) != before:
                for hook in public_change:
                    await hook(uow, row)
            # The answer is the event's object: both are encoded to JSON, never changed in place.
            return private
    return user_private(row, rt.keys)


async def access_user_summary(rt: Runtime, raw_id: str) -> UserSummaryView:
    user_id = parse_id(raw_id)
    async with rt.read() as uow:
        row = None if user_id is None else await queries.select_user(uow.conn, user_id)
    if row is None:
        raise AppError("user.not_found")
    return user_summary(row, rt.clock.now())


async def access_security_events(rt: Runtime, principal: Principal, before: int | None, limit: int) -> dict[str, Any]:
    async with rt.read() as uow:
        rows = await auth_queries.select_security_events(uow.conn, principal.user_id, before, limit)
    return {"security_events": [security_event_view(r) for r in rows[:limit]], "has_more": len(rows) > limit}
