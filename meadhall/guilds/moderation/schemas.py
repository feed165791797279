"""Request and response models of ban routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, StringConstraints

from meadhall.accounts.schemas import UserSummary
from meadhall.core.text import check_single_line

BanReason = Annotated[str, StringConstraints(max_length=512), AfterValidator(check_single_line)]


class BanPut(BaseModel):
    reason: BanReason | None = None


class Ban(BaseModel):
    user: UserSummary
    reason: str | None
    author: UserSummary | None
    created_at: str


class BanResponse(BaseModel):
    ban: Ban


class BansResponse(BaseModel):
    bans: list[Ban]

