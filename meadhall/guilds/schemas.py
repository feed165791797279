"""Request and response models of the guild routes (the OpenAPI source), and the field types shared by
the other guild schemas."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    StrictBool,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from meadhall.api.openapi import ID_PATTERN, OVERRIDE_PERMISSIONS_PATTERN, PERMISSIONS_PATTERN, not_null
from meadhall.core import permissions as perms
from meadhall.core.text import check_multiline, check_single_line
from meadhall.guilds.invites.schemas import InviteGuild


def _permission_mask(value: object) -> int:
    if not isinstance(value, str):
        raise ValueError("must be a permission string such as VIEW_CHANNEL|SEND_MESSAGES")
    return int(perms.parse(value))


# Exchanged as `|`-joined names (docs/reference/permissions.md), held as the integer mask once parsed.
PermissionString = Annotated[
    int,
    BeforeValidator(_permission_mask),
    WithJsonSchema({"type": "string", "description": "Permission names joined with |", "example": "VIEW_CHANNEL",
                    "pattern": PERMISSIONS_PATTERN}),
]
# The same, in a room override: ADMINISTRATOR is not among the names (the model refuses it with 422 too).
OverridePermissionString = Annotated[
    int,
    BeforeValidator(_permission_mask),
    WithJsonSchema({"type": "string", "description": "Permission names joined with |, ADMINISTRATOR excepted",
                    "example": "SEND_MESSAGES", "pattern": OVERRIDE_PERMISSIONS_PATTERN}),
]
Snowflake = Annotated[str, StringConstraints(pattern=ID_PATTERN)]  # what core.ids.parse_id accepts
GuildName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=100),
                      AfterValidator(check_single_line)]
Description = Annotated[str, StringConstraints(max_length=1000), AfterValidator(check_multiline)]


def no_bool(value: object) -> object:
    """false and true are not integers (the document says integer; 40.0 is one, as in JSON Schema)."""
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    return value


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


class PublicGuild(InviteGuild):
    """The InviteGuild fields plus the code to join with."""

    public_invite_code: str | None


class GuildResponse(BaseModel):
    guild: Guild


class GuildsResponse(BaseModel):
    guilds: list[Guild]


class PublicGuildsResponse(BaseModel):
    guilds: list[PublicGuild]
    has_more: bool


def no_nulls(model: BaseModel, names: tuple[str, ...]) -> None:
    """Refuse an explicit null for fields where absent means unchanged."""
    for name in names:
        if name in model.model_fields_set and getattr(model, name) is None:
            raise ValueError(f"{name} cannot be null")
