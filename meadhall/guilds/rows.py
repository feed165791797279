"""The row types of the guild tables (db/schema/guilds.py), one per table shape, returned by every
`queries.py` of meadhall/guilds and read by its services and views.

How a row becomes typed, once for the whole package:
- A query that returns whole rows of one table returns SQLAlchemy's `RowMapping` typed by a `cast` to
  the TypedDict, not a copy. The cast claims only what the guild code relies on: a read-only mapping
  whose keys are the table's columns, answering `row["column"]`, `row.get(...)`, `dict(row)` and
  `{**row}` exactly like the TypedDict. No code in guilds writes into a row (a change goes through an
  `update_*` query and a fresh read), so the one thing a RowMapping cannot do is never asked of it.
  Copying each row into a dict would cost on the permission path (`realtime/guild_state.py` loads
  roles, members and overrides for every message send), so the cast is the honest and cheap choice.
- The permission cache (`realtime/guild_state.py`, below guilds) holds the same RowMappings untyped;
  `guilds/access.py` types them at the boundary with the same cast.
- A row assembled in Python from a joined query (a member with their user row) is a frozen dataclass
  of typed parts (`MemberWithUser`).

Names: a query that updates or deletes one row by its key is `update_<table>_row` / `delete_<table>_row`
(`delete_channel_row`), so it never shares a name with the route of the operation (deleteChannel ->
`delete_channel`) or the service (`do_delete_channel`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypedDict

from sqlalchemy import RowMapping

from meadhall.accounts.queries import UserRow


class GuildRow(TypedDict):
    """One row of `guilds`."""

    id: int
    name: str
    name_norm: str
    description: str | None
    icon_file_id: int | None
    banner_file_id: int | None
    splash_file_id: int | None
    owner_id: int
    member_count: int
    system_channel_id: int | None
    public: bool
    public_invite_code: str | None
    is_main: bool
    created_at: datetime
    perm_version: int


class ChannelRow(TypedDict):
    """One row of `channels` (a guild room or category; guild queries only read rooms of a guild)."""

    id: int
    guild_id: int
    type: str
    name: str | None
    topic: str | None
    position: int
    parent_id: int | None
    slowmode_seconds: int
    user_limit: int | None
    background_file_id: int | None
    icon_file_id: int | None
    dm_owner_id: int | None
    is_group: bool
    dm_pair: str | None
    last_message_id: int | None
    created_at: datetime
    message_version: int
    has_private: bool


class RoleRow(TypedDict):
    """One row of `roles`."""

    id: int
    guild_id: int
    name: str
    color: int
    position: int
    permissions: int
    hoist: bool
    frame_id: int | None
    icon_id: int | None
    is_default: bool
    created_at: datetime


class OverrideRow(TypedDict):
    """One row of `permission_overrides`."""

    channel_id: int
    target_id: int
    kind: Literal["role", "member"]
    allow: int
    deny: int


class MemberRow(TypedDict):
    """One row of `members`."""

    guild_id: int
    user_id: int
    nick: str | None
    nick_norm: str | None
    joined_at: datetime
    timeout_until: datetime | None


class InviteRow(TypedDict):
    """One row of `invites`."""

    code: str
    guild_id: int
    channel_id: int
    inviter_id: int | None
    max_age_seconds: int
    max_uses: int
    uses: int
    expires_at: datetime | None
    is_public: bool
    background_file_id: int | None
    created_at: datetime


class BanRow(TypedDict):
    """One row of `guild_bans`."""

    guild_id: int
    user_id: int
    reason: str | None
    author_id: int | None
    created_at: datetime


class TemplateRow(TypedDict):
    """One row of `templates` (`structure`: the captured roles and rooms, templates/service.py)."""

    id: int
    owner_id: int
    name: str
    description: str | None
    source_guild_id: int | None
    structure: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class MemberWithUser:
    """A membership with its user's row, split from one joined query (members/queries.py)."""

    member: MemberRow
    user: UserRow


def grouped(rows: Iterable[RowMapping], key: str) -> dict[int, list[Any]]:
    """Rows by the value of one of their columns, each list in the order the rows came; a value no row has
    is absent."""
    out: dict[int, list[Any]] = {}
    for row in rows:
        found = out.get(row[key])
        if found is None:
            out[row[key]] = [row]
        else:
            found.append(row)
    return out
