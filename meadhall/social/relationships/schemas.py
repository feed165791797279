"""Request and response models of the relationship routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from meadhall.accounts.schemas import UserSummary
from meadhall.core.text import check_single_line

# Any text: the lookup takes `%`, `_` and `\` literally (docs/social.md), so a string that is no valid
# username simply finds nobody (404 `user.not_found`). No username is longer than 32 characters.
Login = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=32),
                  AfterValidator(check_single_line)]


class FriendRequest(BaseModel):
    username: Login = Field(description="The other user's username, compared case-insensitively")


class RelationshipChange(BaseModel):
    type: Literal["friend", "blocked"] = Field(
        description="`friend`: accept their request, or send one; `blocked`: block them")


# ---- responses ---------------------------------------------------------------------------------


class Relationship(BaseModel):
    id: str = Field(description="The other user's id")
    type: Literal["friend", "incoming", "outgoing", "blocked"]
    user: UserSummary
    since: str = Field(description="When this type was reached")
    style: dict[str, Any] | None = Field(description="The other user's `friends`-scope style (friends only)")


class RelationshipResponse(BaseModel):
    relationship: Relationship


class RelationshipsResponse(BaseModel):
    friends: list[Relationship]
    incoming: list[Relationship]
    outgoing: list[Relationship]
    blocked: list[Relationship]
