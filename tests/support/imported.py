"""Imported authors written as the importers write them (3.21): a `users` row with `imported = true`, no
usable email (the empty string encrypted, a placeholder index), an unusable password hash, no session, and a
membership in a guild. The importers are the real writers; this is for tests that need one quickly."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert, select, update

from meadhall.core.crypto import encrypt
from meadhall.core.text import norm
from meadhall.db.schema import channels, guild_bans, guilds, member_roles, members, messages, reactions, users
from tests.support.cli_runs import Ran, cli_runner


class Imported(dict[str, Any]):
    """What the tests know of an imported author: `id`, `username`; `headers` is empty (no session)."""

    @property
    def id(self) -> str:
        return str(self["id"])

    @property
    def headers(self) -> dict[str, str]:
        return {}


async def imported_author(rt: Any, username: str, guild_id: str | int | None = None, *,
                          display_name: str | None = None) -> Imported:
    """An imported author, a member of `guild_id` when given (no events, no system message)."""
    user_id = rt.ids.next()
    now = rt.clock.now()
    shown = display_name or username
    async with rt.engine.begin() as conn:
        await conn.execute(insert(users).values(
            id=user_id, username=username, username_norm=norm(username),
            email_enc=encrypt(rt.keys.email_enc, "", aad=str(user_id).encode()),
            email_index=f"imported:{user_id}", password_hash="!", display_name=shown,
            display_name_norm=norm(shown), bio="", status="online", locale="en", timezone="Europe/Moscow",
            totp_enabled=False, is_instance_admin=False, imported=True, password_reset_required=False,
            # The import's own time: recent enough that a presence rule reading only this would say online.
            last_seen_at=now, created_at=now))
        if guild_id is not None:
            await conn.execute(insert(members).values(guild_id=int(guild_id), user_id=user_id, nick=None,
                                                      nick_norm=None, joined_at=now, timeout_until=None))
            await conn.execute(update(guilds).where(guilds.c.id == int(guild_id))
                               .values(member_count=guilds.c.member_count + 1))
    return Imported(id=user_id, username=username)


async def authored_message(rt: Any, channel_id: str | int, author_id: str | int, content: str) -> int:
    """A message of a guild room written as an import writes it (no events); its id."""
    message_id = rt.ids.next()
    async with rt.engine.begin() as conn:
        guild_id = (await conn.execute(select(channels.c.guild_id).where(channels.c.id == int(channel_id))
                                       )).scalar_one()
        await conn.execute(insert(messages).values(
            id=message_id, channel_id=int(channel_id), guild_id=guild_id, author_id=int(author_id),
            content=content, content_norm=norm(content), kind="normal", mentions=[], mention_channels=[],
            mention_everyone=False, suppress_embeds=False, pinned=False, created_at=rt.clock.now()))
    return message_id


async def make_imported(rt: Any, user_id: str | int) -> None:
    """Turn an existing account into an imported author, for paths an imported author can never reach by
    itself (a passkey it could not have registered)."""
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(user_id)).values(imported=True))


async def history_rows(rt: Any, *, guild_id: str | int, user_id: str | int, role_ids: tuple[str, ...] = (),
                        reacted: tuple[tuple[int, str], ...] = (), banned_from: str | int | None = None) -> None:
    """Rows an import writes for one of its authors besides the membership: roles, reactions (message id,
    emoji), a ban; written directly (no events)."""
    now = rt.clock.now()
    async with rt.engine.begin() as conn:
        for role_id in role_ids:
            await conn.execute(insert(member_roles).values(guild_id=int(guild_id), user_id=int(user_id),
                                                           role_id=int(role_id)))
        for message_id, emoji in reacted:
            await conn.execute(insert(reactions).values(message_id=message_id, emoji=emoji, user_id=int(user_id),
                                                        created_at=now))
        if banned_from is not None:
            await conn.execute(insert(guild_bans).values(guild_id=int(banned_from), user_id=int(user_id),
                                                         reason="imported ban", author_id=None, created_at=now))


async def meadhall(settings: Any, *args: str) -> Ran:
    """Run one `meadhall` command in-process against the test's database and data directory; its events go to
    the outbox, which a served test app drains."""
    return await cli_runner(settings)(*args)


# The tooltip of the client's `Imported` badge (web/src/lib/profileCard.svelte.ts), checked by the browser tests.
IMPORTED_TIP = ("Imported author: these messages were brought here from another service. The person who wrote "
                "them has not joined yet.")
