"""Request and response models of notification settings (the OpenAPI source; docs/push.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, BeforeValidator, Field, StrictBool


def _text(value: Any) -> Any:
    if value is not None and not isinstance(value, str):
        raise ValueError("must be an ISO 8601 timestamp with its offset")  # never a number of seconds
    return value


Timestamp = Annotated[AwareDatetime, BeforeValidator(_text)]

_MUTED = ("until when notifications stay off (the level counts as `nothing` until then; kept to the millisecond); a "
          "past time, or null, is no mute")


class GuildSettingPut(BaseModel):
    """The whole setting: an omitted field takes its default."""

    level: Literal["all", "mentions", "nothing"]
    muted_until: Timestamp | None = Field(default=None, description=_MUTED)
    # Strict: 0 and 1 are not booleans (the document says boolean).
    suppress_everyone: StrictBool = Field(default=False, description="no notification for `@everyone` in this server")


class ChannelSettingPut(BaseModel):
    """The whole setting: an omitted field takes its default."""

    level: Literal["default", "all", "mentions", "nothing"] = Field(
        description="`default` follows the server's level (rooms of a server only)")
    muted_until: Timestamp | None = Field(default=None, description=_MUTED)


class GuildSetting(BaseModel):
    guild_id: str
    level: Literal["all", "mentions", "nothing"]
    muted_until: str | None
    suppress_everyone: bool


class ChannelSetting(BaseModel):
    channel_id: str
    level: Literal["default", "all", "mentions", "nothing"]
    muted_until: str | None


class NotificationSettings(BaseModel):
    guilds: list[GuildSetting] = Field(description="only servers whose setting differs from the default "
                                                   "(`mentions`, not muted, `@everyone` not suppressed)")
    channels: list[ChannelSetting] = Field(description="only rooms and conversations whose setting differs from "
                                                       "the default (`default` for a room, `all` for a "
                                                       "conversation, not muted)")


class GuildSettingResponse(BaseModel):
    setting: GuildSetting


class ChannelSettingResponse(BaseModel):
    setting: ChannelSetting
