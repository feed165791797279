"""Request and response models of the invitation routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, Field

from meadhall.accounts.schemas import UserSummary


def _no_bool(value: object) -> object:
    """JSON true/false are not integers (the document says integer; 3.0 still is one)."""
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    return value


class InviteCreate(BaseModel):
    max_age_seconds: Annotated[int, Field(ge=0, le=604800, description="0 = never expires"),
                               BeforeValidator(_no_bool)] = 86400
    max_uses: Annotated[int, Field(ge=0, le=100, description="0 = unlimited"), BeforeValidator(_no_bool)] = 0


class Invite(BaseModel):
    code: str
    url: str
    guild_id: str
    channel_id: str
    inviter: UserSummary | None
    max_age_seconds: int
    max_uses: int
    uses: int
    expires_at: str | None
    is_public: bool
    background_file_id: str | None
    created_at: str


class InviteGuild(BaseModel):
    id: str
    name: str
    icon_file_id: str | None
    description: str | None
    member_count: int
    is_member: bool


class InviteResponse(BaseModel):
    invite: Invite


class InvitesResponse(BaseModel):
    invites: list[Invite]


class InvitePreviewResponse(BaseModel):
    invite: Invite
    guild: InviteGuild


class JoinResponse(BaseModel):
    guild_id: str
