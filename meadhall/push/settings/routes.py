"""Routes of /users/@me/notification-settings: parse, one service call (docs/push.md, "Notification levels")."""

from __future__ import annotations

from fastapi import APIRouter

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors, rules, with_rules
from meadhall.auth.deps import PrincipalDep
from meadhall.push.settings import schemas as s
from meadhall.push.settings import service

router = APIRouter(tags=["users"])

_CHANNEL_RULES = with_rules(rules({"level": "`default` only for rooms of a server, not for a conversation"}),
                            rules({"channel_id": "a text or voice room, or a conversation; a category answers this"},
                                  code="channel.wrong_type"))


@router.get("/users/@me/notification-settings", operation_id="getNotificationSettings",
            response_model=s.NotificationSettings)
async def get_notification_settings(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    """The caller's settings that differ from the defaults: a server `mentions`, a room `default` (its server's
    level), a conversation `all`, nothing muted, `@everyone` not suppressed."""
    return await service.access_notification_settings(rt, principal)


@router.put("/users/@me/notification-settings/guilds/{guild_id}", operation_id="setGuildNotificationSettings",
            response_model=s.GuildSettingResponse, responses=errors("guild.not_found"))
async def set_guild_notification_settings(rt: RuntimeDep, guild_id: str, body: s.GuildSettingPut,
                                          principal: PrincipalDep) -> dict:
    """Replace the caller's setting for a server they are a member of (omitted fields take their defaults)."""
    return await service.do_set_guild_setting(rt, principal, guild_id, body.level, body.muted_until,
                                              body.suppress_everyone)


@router.put("/users/@me/notification-settings/channels/{channel_id}",
            operation_id="setChannelNotificationSettings", response_model=s.ChannelSettingResponse,
            openapi_extra=_CHANNEL_RULES,
            responses=errors("channel.not_found", "channel.wrong_type"))
async def set_channel_notification_settings(rt: RuntimeDep, channel_id: str, body: s.ChannelSettingPut,
                                            principal: PrincipalDep) -> dict:
    """Replace the caller's setting for a room they may view (text or voice) or a conversation they take part
    in (omitted fields take their defaults)."""
    return await service.do_set_room_setting(rt, principal, channel_id, body.level, body.muted_until)
