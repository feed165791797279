"""Request and response models of the cosmetics gallery routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, StringConstraints

from meadhall.core.text import check_single_line

COSMETIC_KINDS = ("frame", "icon")
CosmeticKind = Literal["frame", "icon"]
CosmeticName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=32),
                         AfterValidator(check_single_line)]


class Cosmetic(BaseModel):
    id: str
    guild_id: str
    kind: CosmeticKind
    name: str
    file_id: str
    created_at: str


class CosmeticResponse(BaseModel):
    cosmetic: Cosmetic


class CosmeticsResponse(BaseModel):
    cosmetics: list[Cosmetic]


class CosmeticPatch(BaseModel):
    name: CosmeticName
