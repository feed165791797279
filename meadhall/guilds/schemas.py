"""Request and response models of guild, room and override routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from meadhall.api.openapi import ID_PATTERN, PERMISSIONS_PATTERN, not_null
from meadhall.core import permissions as perms
from meadhall.core.limits import ROOM_POSITION_MAX
from meadhall.core.text import check_multiline, check_single_line
from meadhall.guilds.invites.schemas import InviteGuild


def _permission_mask(value: object) -> int:
    if not isinstance(value, str):
        raise ValueError("must be a permission string such as VIEW_CHANNEL|SEND_MESSAGES")
    return int(perms.parse(value))


# Exchanged as `|`-joined names (API.md 0.12), held as the integer mask once parsed.
PermissionString = Annotated[
    int,
    BeforeValidator(_permission_mask),
    WithJsonSchema({"type": "string", "description": "Permission names joined with |", "example": "VIEW_CHANNEL",
                    "pattern": PERMISSIONS_PATTERN}),
]
Snowflake = Annotated[str, StringConstraints(pattern=ID_PATTERN)]  # what core.ids.parse_id accepts
GuildName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=100),
                      AfterValidator(check_single_line)]
RoomName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
                     AfterValidator(check_single_line)]
Description = Annotated[str, StringConstraints(max_length=1000), AfterValidator(check_multiline)]
Topic = Annotated[str, StringConstraints(max_length=1024), AfterValidator(check_multiline)]


def no_bool(value: object) -> object:
    """false and true are not integers (the document says integer; 40.0 is one, as in JSON Schema)."""
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    return value


Position = Annotated[int, Field(ge=0, le=ROOM_POSITION_MAX), BeforeValidator(no_bool)]
Slowmode = Annotated[int, Field(ge=0, le=21600), BeforeValidator(no_bool)]
UserLimit = Annotated[int, Field(ge=0, le=99), BeforeValidator(no_bool)]


class GuildCreate(BaseModel):
    name: GuildName
    description: Description | None = None
    template_id: Annotated[str, StringConstraints(pattern=r"^personal:\d{1,20}$")] | None = None


class GuildPatch(BaseModel):
    # not_null: absent means unchanged; null is refused for these (the document says so).
    name: GuildName | None = Field(None, json_schema_extra=not_null)
    description: Description | None = None
    system_channel_id: Snowflake | None = None
    public: StrictBool | None = Field(None, json_schema_extra=not_null)  # 0 and 1 are not booleans (the document says boolean)
    owner_id: Snowflake | None = Field(None, json_schema_extra=not_null)

    @model_validator(mode="after")
    def _nulls(self) -> GuildPatch:
        for name in ("name", "public", "owner_id"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null")
        return self

    def changes(self) -> dict[str, object]:
        return {n: getattr(self, n) for n in self.model_fields_set}


class OverrideSpec(BaseModel):
    id: Snowflake
    type: Literal["role", "member"]
    allow: PermissionString = 0
    deny: PermissionString = 0

    @model_validator(mode="after")
    def _no_administrator(self) -> OverrideSpec:
        perms.validate_override(int(self.allow), int(self.deny))
        return self


class OverridePut(BaseModel):
    type: Literal["role", "member"]
    allow: PermissionString = 0
    deny: PermissionString = 0

    @model_validator(mode="after")
    def _no_administrator(self) -> OverridePut:
        perms.validate_override(int(self.allow), int(self.deny))
        return self


class ChannelCreate(BaseModel):
    # Only voice rooms have a user limit; a category has no parent (the service refuses both too).
    model_config = ConfigDict(json_schema_extra={"allOf": [
        {"anyOf": [{"properties": {"type": {"const": "voice"}}}, {"properties": {"user_limit": {"type": "null"}}}]},
        {"anyOf": [{"properties": {"type": {"enum": ["text", "voice"]}}},
                   {"properties": {"parent_id": {"type": "null"}}}]},
    ]})

    name: RoomName
    type: Literal["text", "voice", "category"]
    parent_id: Snowflake | None = None
    topic: Topic | None = None
    position: Position | None = None
    slowmode_seconds: Slowmode | None = None
    user_limit: UserLimit | None = None
    permission_overrides: list[OverrideSpec] | None = None


class ChannelPatch(BaseModel):
    # not_null: absent means unchanged; null is refused for these (the document says so).
    name: RoomName | None = Field(None, json_schema_extra=not_null)
    topic: Topic | None = None
    parent_id: Snowflake | None = None
    position: Position | None = Field(None, json_schema_extra=not_null)
    slowmode_seconds: Slowmode | None = Field(None, json_schema_extra=not_null)
    user_limit: UserLimit | None = None

    @model_validator(mode="after")
    def _nulls(self) -> ChannelPatch:
        for name in ("name", "position", "slowmode_seconds"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null")
        return self

    def changes(self) -> dict[str, object]:
        return {n: getattr(self, n) for n in self.model_fields_set}


class ChannelMove(BaseModel):
    id: Snowflake
    position: Position
    parent_id: Snowflake | None = None


class ChannelReorder(BaseModel):
    channels: Annotated[list[ChannelMove], Field(min_length=1, max_length=500)]

    def moves(self) -> list[dict[str, object]]:
        return [m.model_dump(include={"id", "position"} | ({"parent_id"} & m.model_fields_set)) for m in self.channels]


# ---- responses ---------------------------------------------------------------------------------


class Guild(BaseModel):
    id: str
    name: str
    description: str | None
    icon_file_id: str | None
    banner_file_id: str | None
    splash_file_id: str | None
    owner_id: str
    member_count: int
    system_channel_id: str | None
    public: bool
    public_invite_code: str | None
    is_main: bool
    created_at: str


class PermissionOverride(BaseModel):
    id: str
    type: str
    allow: str
    deny: str


class Channel(BaseModel):
    id: str
    type: str
    guild_id: str | None
    name: str | None
    topic: str | None
    position: int
    parent_id: str | None
    slowmode_seconds: int
    user_limit: int | None
    background_file_id: str | None
    icon_file_id: str | None
    dm_owner_id: str | None
    permission_overrides: list[PermissionOverride]
    last_message_id: str | None
    created_at: str


class PublicGuild(InviteGuild):
    """API.md 2.9: the InviteGuild fields plus the code to join with."""

    public_invite_code: str | None


class GuildResponse(BaseModel):
    guild: Guild


class GuildsResponse(BaseModel):
    guilds: list[Guild]


class PublicGuildsResponse(BaseModel):
    guilds: list[PublicGuild]
    has_more: bool


class ChannelResponse(BaseModel):
    channel: Channel


class ChannelsResponse(BaseModel):
    channels: list[Channel]
