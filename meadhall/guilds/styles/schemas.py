"""Request and response models of the personal style routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from meadhall.guilds.cosmetics.schemas import Cosmetic
from meadhall.guilds.schemas import Snowflake

StyleScope = Literal["friends", "guild"]


class Style(BaseModel):
    scope: StyleScope
    guild_id: str | None
    frame_id: str | None
    icon_id: str | None
    color: int | None
    updated_at: str


class StyleResponse(BaseModel):
    style: Style


class AvailableCosmetics(BaseModel):
    friends: list[Cosmetic]
    guilds: dict[str, list[Cosmetic]]


class StylesResponse(BaseModel):
    styles: list[Style]
    available: AvailableCosmetics


class StylePut(BaseModel):
    scope: StyleScope
    guild_id: Snowflake | None = None
    frame_id: Snowflake | None = None
    icon_id: Snowflake | None = None
    color: Annotated[int, Field(ge=0, le=16_777_215)] | None = None
