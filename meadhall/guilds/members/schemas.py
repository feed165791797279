"""Request and response models of member routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BaseModel, Field, StringConstraints

from meadhall.accounts.schemas import UserSummary
from meadhall.core.text import check_single_line

Nick = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=32),
                 AfterValidator(check_single_line)]


class MemberSelfPatch(BaseModel):
    nick: Nick | None = Field(default=None, description="1-32 characters; null clears")

    def changes(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.model_fields_set}


class MemberPatch(BaseModel):
    nick: Nick | None = Field(default=None, description="1-32 characters; null clears")
    timeout_until: AwareDatetime | None = Field(
        default=None, description="In the future, at most 28 days from now; null clears"
    )

    def changes(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.model_fields_set}


# ---- responses ---------------------------------------------------------------------------------


class Member(BaseModel):
    guild_id: str
    user: UserSummary
    nick: str | None
    roles: list[str]
    joined_at: str
    timeout_until: str | None
    style: dict[str, Any] | None


class MemberResponse(BaseModel):
    member: Member


class MembersResponse(BaseModel):
    members: list[Member]
    has_more: bool

