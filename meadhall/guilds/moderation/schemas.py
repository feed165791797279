"""Request and response models of ban routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, StrictInt, StringConstraints

from meadhall.accounts.schemas import UserSummary
from meadhall.core.numbers import integral
from meadhall.core.text import check_single_line

BanReason = Annotated[str, StringConstraints(max_length=512), AfterValidator(check_single_line)]


# A week, as the client offers at most (docs/moderation.md).
DELETE_MESSAGE_SECONDS_MAX = 604800


class BanPut(BaseModel):
    reason: BanReason | None = None
    # Strict: a JSON number only (`true` or "3600" are not a number of seconds; 3600.0 is 3600).
    delete_message_seconds: Annotated[StrictInt, Field(
        ge=0, le=DELETE_MESSAGE_SECONDS_MAX,
        description="Delete the user's messages in this server written in this many seconds before the ban"),
        BeforeValidator(integral)] = 0


class Ban(BaseModel):
    user: UserSummary
    reason: str | None
    author: UserSummary | None
    created_at: str


class BanResponse(BaseModel):
    ban: Ban


class BansResponse(BaseModel):
    bans: list[Ban]

