"""Request and response models of room and override routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from meadhall.api.openapi import not_null
from meadhall.core import permissions as perms
from meadhall.core.limits import ROOM_POSITION_MAX
from meadhall.core.text import check_multiline, check_single_line
from meadhall.guilds.schemas import OverridePermissionString, Snowflake, no_bool

RoomName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
                     AfterValidator(check_single_line)]
Topic = Annotated[str, StringConstraints(max_length=1024), AfterValidator(check_multiline)]


Position = Annotated[int, Field(ge=0, le=ROOM_POSITION_MAX), BeforeValidator(no_bool)]
Slowmode = Annotated[int, Field(ge=0, le=21600), BeforeValidator(no_bool)]
UserLimit = Annotated[int, Field(ge=0, le=99), BeforeValidator(no_bool)]


class OverrideSpec(BaseModel):
    id: Snowflake
    type: Literal["role", "member"]
    allow: OverridePermissionString = 0
    deny: OverridePermissionString = 0

    @model_validator(mode="after")
    def _no_administrator(self) -> OverrideSpec:
        perms.validate_override(int(self.allow), int(self.deny))
        return self


class OverridePut(BaseModel):
    type: Literal["role", "member"]
    allow: OverridePermissionString = 0
    deny: OverridePermissionString = 0

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


class ChannelResponse(BaseModel):
    channel: Channel


class ChannelsResponse(BaseModel):
    channels: list[Channel]

