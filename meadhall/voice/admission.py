"""Who may be in a media-server room (docs/voice.md, "Who may be in a media room").

A media-server token cannot be revoked: whoever held one may connect with it until it expires (10 minutes),
also after being kicked, banned, removed from a group or deprived of the room, and a participant server-muted
or deafened since the token was signed would connect with what it allowed. So the service, not the token,
decides: in a guild voice room only the user whose voice state is in that room, in a conversation call's room
only a joined participant of its ongoing call. When the media server reports someone joining
(`participant_joined`), anyone else is removed at once, and an allowed guild participant gets the
restrictions in force applied again (the sources they may publish now, a server mute, a server deafen). Calls
restrict nobody: every source may be published there. The reconciliation job (voice/reconcile.py) checks
every media room the same way.
"""

from __future__ import annotations

import re

from meadhall.runtime import Runtime
from meadhall.social.calls.service import joined_by_call_room
from meadhall.voice import state as vs
from meadhall.voice.media import MediaServer
from meadhall.voice.removal import clear_state, still_allowed

GUILD_ROOM = re.compile(r"^guild_(\d+)_channel_(\d+)$")
CALL_ROOM = re.compile(r"^dm_(\d+)$")


async def admit(rt: Runtime, room: str, identity: str) -> str:
    """Someone joined `room` on the media server: `removed`, `restricted` (allowed in a guild room, the
    restrictions applied again), `admitted` (a joined participant of the call) or `ignored` (not one of our
    rooms, or an identity that is no user of ours, such as a recorder)."""
    if not identity.isdigit():
        return "ignored"
    user_id = int(identity)
    if match := CALL_ROOM.match(room):
        joined = await joined_by_call_room(rt, int(match.group(1)))
        if user_id in joined.get(room, set()):
            return "admitted"
        return await _remove(rt, room, user_id)
    if not GUILD_ROOM.match(room):
        return "ignored"
    _, mine = await vs.current(rt, user_id)
    if mine is None or vs.room_of(mine) != room:
        return await _remove(rt, room, user_id)
    if not await still_allowed(rt, mine):
        # A change the guilds' hook missed (a failed revalidation): cleared as the reconciliation would.
        await clear_state(rt, mine)
        return "removed"
    grant = await vs.grant_now(rt, mine)
    async with MediaServer(rt.settings) as media:
        await media.restrict(room, user_id, grant.sources, deafened=mine.server_deafen)
    return "restricted"


async def _remove(rt: Runtime, room: str, user_id: int) -> str:
    async with MediaServer(rt.settings) as media:
        await media.remove(room, user_id)
    return "removed"
