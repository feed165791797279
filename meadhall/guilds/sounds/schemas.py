"""Request and response models of the sound routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints, model_validator

from meadhall.api.openapi import not_null
from meadhall.core.text import check_single_line
from meadhall.guilds.schemas import no_nulls

SOUND_KINDS = ("soundboard", "interface")
# The interface events an interface sound may replace (docs/customisation.md).
PALETTE_EVENTS = ("message", "mention", "dm_message", "voice_join", "voice_leave", "mute", "unmute", "deafen",
                  "undeafen", "call_ring", "call_end", "stream_start", "stream_end")
SoundKind = Literal["soundboard", "interface"]
PaletteEvent = Literal["message", "mention", "dm_message", "voice_join", "voice_leave", "mute", "unmute",
                       "deafen", "undeafen", "call_ring", "call_end", "stream_start", "stream_end"]
SoundName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=32),
                      AfterValidator(check_single_line)]
SoundEmoji = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64),
                       AfterValidator(check_single_line)]


class Sound(BaseModel):
    id: str
    guild_id: str
    name: str
    emoji: str | None
    kind: SoundKind
    palette_event: PaletteEvent | None
    file_id: str
    duration_ms: int | None
    creator_id: str | None
    created_at: str


class SoundResponse(BaseModel):
    sound: Sound


class SoundsResponse(BaseModel):
    sounds: list[Sound]


class SoundPatch(BaseModel):
    name: SoundName | None = Field(None, json_schema_extra=not_null)
    emoji: SoundEmoji | None = None
    palette_event: PaletteEvent | None = Field(None, json_schema_extra=not_null)

    @model_validator(mode="after")
    def _nulls(self) -> SoundPatch:
        no_nulls(self, ("name", "palette_event"))
        return self

    def changes(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.model_fields_set}
