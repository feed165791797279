"""The READY payload (docs/gateway.md, docs/social.md): everything a client needs to draw its first screen —
guilds, read states, conversations, relationships with the friends' presences, and ongoing calls. Each part
is read in a fixed number of queries, whatever the number of guilds, conversations or friends."""

from __future__ import annotations

from typing import Any

from meadhall.accounts import queries as account_queries
from meadhall.accounts.views import Summaries, user_private
from meadhall.gateway.auth import GatewayIdentity
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.snapshot import snapshots_of_user
from meadhall.messages.read_states import read_state_views
from meadhall.push.settings.service import settings_view
from meadhall.runtime import Runtime
from meadhall.social.calls.service import ready_calls
from meadhall.social.conversations.views import conversation_list
from meadhall.social.relationships.ready import ready_relationships
from meadhall.voice.service import fill_ready_voice_states

GATEWAY_VERSION = 1


async def ready_payload(rt: Runtime, who: GatewayIdentity, gateway_session_id: str) -> dict[str, Any] | None:
    """None when the account disappeared meanwhile."""
    async with rt.read() as uow:
        user = await account_queries.select_user(uow.conn, who.user_id)
        if user is None or user["deleted_at"] is not None:
            return None
        guild_rows = await guild_queries.select_guilds_of_user(uow.conn, who.user_id)
        guilds = await snapshots_of_user(uow, guild_rows, user, who.is_instance_admin)
        await fill_ready_voice_states(rt, uow.conn, guilds, who.user_id, uow.now)
        read_states = await read_state_views(uow.conn, who.user_id)
        notification_settings = await settings_view(uow.conn, who.user_id, uow.now)
        # Each user's summary is made once for the whole READY: a friend is in the friends list, the
        # presences, and maybe in conversations and as the author of their last messages.
        summaries = Summaries(uow.now)
        dm_channels = await conversation_list(uow.conn, who.user_id, uow.now, summaries)
        relationships, presences = await ready_relationships(uow.conn, who.user_id, summaries)
        calls = await ready_calls(uow.conn, who.user_id)
    return {
        "v": GATEWAY_VERSION,
        "session_id": gateway_session_id,
        "user": user_private(user, rt.keys),
        "guilds": guilds,
        "dm_channels": dm_channels,
        "read_states": read_states,
        "notification_settings": notification_settings,
        "relationships": relationships,
        "presences": presences,
        "calls": calls,
    }
