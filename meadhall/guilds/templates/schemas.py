"""Request and response models of personal templates (OpenAPI: createTemplate, listMyTemplates)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from meadhall.api.openapi import ID_PATTERN
from meadhall.core.ids import parse_id
from meadhall.core.text import check_multiline, check_single_line


def _snowflake(value: str) -> str:
    if parse_id(value) is None:
        raise ValueError("must be an id")
    return value


Snowflake = Annotated[str, AfterValidator(_snowflake), Field(json_schema_extra={"pattern": ID_PATTERN})]
TemplateName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
                         AfterValidator(check_single_line)]
TemplateDescription = Annotated[str, StringConstraints(max_length=500), AfterValidator(check_multiline)]


class TemplateCreate(BaseModel):
    guild_id: Snowflake
    name: TemplateName
    description: TemplateDescription | None = None


class TemplateRole(BaseModel):
    name: str
    permissions: str
    color: int
    hoist: bool
    is_default: bool


class TemplateCategory(BaseModel):
    name: str
    position: int


class TemplateChannel(BaseModel):
    name: str
    type: str
    topic: str | None
    position: int
    slowmode_seconds: int
    user_limit: int | None
    category: str | None


class TemplateStructure(BaseModel):
    roles: list[TemplateRole]
    categories: list[TemplateCategory]
    channels: list[TemplateChannel]


class Template(BaseModel):
    id: str
    name: str
    description: str | None
    owner_id: str
    source_guild_id: str | None
    structure: TemplateStructure
    created_at: str


class TemplateResponse(BaseModel):
    template: Template


class TemplatesResponse(BaseModel):
    templates: list[Template]
