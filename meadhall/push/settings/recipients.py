"""Who a message's Web Push goes to, by their notification levels (docs/push.md, "How push follows the levels").

The send path names the people a message concerns (the mentioned, the recipient of a private message, the
participants of a conversation). One statement reads the settings of those people and of everyone who chose
`all` for the room or its server (queries.select_message_settings); nobody else is looked at, so a server whose
members keep the defaults costs that one indexed read per message. Then:

- `nothing` (or a mute that has not run out) sends nothing;
- `mentions` sends a mention of the user, a private message to them, an `@everyone` unless the user suppresses
  `@everyone` in that server, and every message of a conversation;
- `all` sends every message of the room besides, to those who may view it now (never another's private
  message)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.guilds.queries import select_guild
from meadhall.messages.sent_hooks import SentMessage
from meadhall.push.settings.levels import ALL, NOTHING, effective_level
from meadhall.push.settings.queries import MessageSettings, select_message_settings
from meadhall.realtime.guild_state import cached_state


async def push_recipients(conn: AsyncConnection, sent: SentMessage, named: list[int], now: datetime) -> list[int]:
    """`named` (the send path's recipients, the author left out) filtered by their levels, with those who chose
    `all` added; sorted."""
    found = await select_message_settings(conn, sent.guild_id, sent.channel_id, named)
    if sent.guild_id is None:
        return [u for u in named
                if effective_level(None, found["rooms"].get(u), now, conversation=True) != NOTHING]
    chosen = {u: _level(found, u, now) for u in named}
    direct = {int(m) for m in sent.message.get("mentions") or ()}
    everyone = bool(sent.message.get("mention_everyone"))
    wanted = {u for u, level in chosen.items() if level != NOTHING and (
        u in direct or level == ALL or (everyone and not _suppresses_everyone(found, u)))}
    if sent.message.get("kind") != "private":
        others = {u for u in {*found["guilds"], *found["rooms"]} - {*named, sent.author_id}
                  if _level(found, u, now) == ALL}
        if others:
            wanted |= others & await _viewers(conn, sent.guild_id, sent.channel_id, now)
    return sorted(wanted)


def _level(found: MessageSettings, user_id: int, now: datetime) -> str:
    guild = found["guilds"].get(user_id)
    return effective_level(None if guild is None else guild[:2], found["rooms"].get(user_id), now)


def _suppresses_everyone(found: MessageSettings, user_id: int) -> bool:
    guild = found["guilds"].get(user_id)
    return guild is not None and guild[2]


async def _viewers(conn: AsyncConnection, guild_id: int, channel_id: int, now: datetime) -> set[int]:
    """Who may view the room now: from the permission data the send path has just cached (one read of the
    guild's version), computed once per version for the whole server."""
    guild = await select_guild(conn, guild_id)
    state = None if guild is None else await cached_state(conn, guild_id, int(guild["perm_version"]))
    return set() if state is None else set(state.viewers(channel_id, now))
