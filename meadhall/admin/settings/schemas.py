"""Request and response models of the instance settings (OpenAPI: getInstanceSettings,
updateInstanceSettings)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, field_validator

from meadhall.admin.settings.nulls import refuse_null
from meadhall.api.openapi import not_null
from meadhall.core.numbers import integral
from meadhall.files.limits import MEDIA_LIMIT_MAX, MEDIA_LIMIT_MIN

# The constraints come before the conversion: after it, pydantic can no longer state them as the schema's
# `minimum`/`maximum`, and the document would lose them.
MediaLimit = Annotated[StrictInt, Field(ge=MEDIA_LIMIT_MIN, le=MEDIA_LIMIT_MAX, description="bytes"),
                       BeforeValidator(integral)]


class MediaLimits(BaseModel):
    avatar_max_bytes: int
    guild_image_max_bytes: int
    emoji_max_bytes: int
    sound_max_bytes: int
    gallery_max_bytes: int


class InstanceSettings(BaseModel):
    media_limits: MediaLimits
    updated_at: str


class InstanceSettingsResponse(BaseModel):
    settings: InstanceSettings


_LIMIT_NAMES = ("avatar_max_bytes", "guild_image_max_bytes", "emoji_max_bytes", "sound_max_bytes",
                "gallery_max_bytes")


class MediaLimitsPatch(BaseModel):
    """Any subset of the five limits; an unknown name is refused."""

    model_config = ConfigDict(extra="forbid")

    avatar_max_bytes: MediaLimit | None = Field(None, json_schema_extra=not_null)
    guild_image_max_bytes: MediaLimit | None = Field(None, json_schema_extra=not_null)
    emoji_max_bytes: MediaLimit | None = Field(None, json_schema_extra=not_null)
    sound_max_bytes: MediaLimit | None = Field(None, json_schema_extra=not_null)
    gallery_max_bytes: MediaLimit | None = Field(None, json_schema_extra=not_null)

    _not_null = field_validator("*", mode="before")(refuse_null)

    def values(self) -> dict[str, int]:
        return {n: getattr(self, n) for n in self.model_fields_set}


class InstanceSettingsPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    media_limits: MediaLimitsPatch | None = Field(None, json_schema_extra=not_null)

    _not_null = field_validator("*", mode="before")(refuse_null)

    def media_limit_changes(self) -> dict[str, int]:
        return {} if self.media_limits is None else self.media_limits.values()
