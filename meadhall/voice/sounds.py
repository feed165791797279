"""Playing a soundboard sound in one's voice room (OpenAPI: playSound): USE_SOUNDBOARD in that room, the sound a
soundboard sound of the guild; SOUNDBOARD_PLAY reaches the participants of that room only (clients play it
locally, nothing goes through the media server)."""

from __future__ import annotations

from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, permission_denied
from meadhall.guilds.access import access_guild
from meadhall.guilds.sounds.service import soundboard_sound
from meadhall.guilds.sounds.views import sound_view
from meadhall.integrations.livekit import check_voice_enabled
from meadhall.runtime import Runtime
from meadhall.voice import state as vs
from meadhall.voice.events import notify_soundboard_play
from meadhall.voice.store import VoiceState, voice_store

P = perms.P


async def do_play_sound(rt: Runtime, principal: Principal, raw_guild_id: str, raw_sound_id: str) -> None:
    check_voice_enabled(rt.settings)
    me = principal.user_id
    async with rt.read() as uow:
        gc = await access_guild(uow.conn, principal, raw_guild_id, uow.now)
        _, mine = await vs.current(rt, me)
        if mine is None or mine.guild_id != str(gc.guild_id):
            raise AppError("voice.not_connected")
        guild = await vs.guild_state(uow.conn, gc.guild_id)
        mask = 0 if guild is None else vs.mask_in(guild, me, int(mine.channel_id), uow.now)
        if not mask & P.USE_SOUNDBOARD:
            raise permission_denied("USE_SOUNDBOARD", "Missing permission USE_SOUNDBOARD in this voice room")
        sound = await soundboard_sound(uow.conn, gc.guild_id, raw_sound_id)
        states = [VoiceState.decode(r) for r in await voice_store(rt).in_guild(gc.guild_id)]
        participants = {int(s.user_id) for s in states if s.channel_id == mine.channel_id}
        uow.emit(notify_soundboard_play(gc.guild_id, int(mine.channel_id), me, sound_view(sound), participants))
