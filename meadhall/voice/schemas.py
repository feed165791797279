"""Request and response models of the voice routes (the OpenAPI source)."""

from __future__ import annotations

from pydantic import BaseModel, Field, StrictBool, model_validator

from meadhall.api.openapi import not_null
from meadhall.guilds.members.schemas import Member
from meadhall.guilds.schemas import Snowflake, no_nulls


class VoiceState(BaseModel):
    guild_id: str
    channel_id: str | None = Field(description="the voice room; null in the VOICE_STATE_UPDATE that reports leaving")
    user_id: str
    member: Member | None = Field(description="null once the user is no longer a member (kicked, banned, left)")
    microphone: bool
    sound: bool = Field(description="false: the participant deafened themselves")
    camera: bool
    screen: bool
    server_mute: bool
    server_deafen: bool
    joined_at: str


class VoiceStateResponse(BaseModel):
    voice_state: VoiceState


class VoiceStatesResponse(BaseModel):
    voice_states: list[VoiceState]


class VoiceJoinResponse(BaseModel):
    """The voice state and what the media server takes: a signed token for `room`, valid 10 minutes, at `url`
    (connect with livekit-client: `room.connect(url, token)`)."""

    token: str
    url: str
    room: str
    voice_state: VoiceState
    push_to_talk_required: bool = Field(description="the member lacks USE_VAD: transmit only while a key is held")


class OwnVoiceFlags(BaseModel):
    # Absent means unchanged; null is refused, and so are "yes", 0 and 1 (the document says boolean).
    microphone: StrictBool | None = Field(None, json_schema_extra=not_null)
    sound: StrictBool | None = Field(None, json_schema_extra=not_null)
    camera: StrictBool | None = Field(None, json_schema_extra=not_null)
    screen: StrictBool | None = Field(None, json_schema_extra=not_null)

    @model_validator(mode="after")
    def _nulls(self) -> OwnVoiceFlags:
        no_nulls(self, ("microphone", "sound", "camera", "screen"))
        return self

    def changes(self) -> dict[str, bool]:
        return {n: bool(getattr(self, n)) for n in sorted(self.model_fields_set)}


class ModeratorVoiceFlags(BaseModel):
    server_mute: StrictBool | None = Field(None, json_schema_extra=not_null, description="needs MUTE_MEMBERS")
    server_deafen: StrictBool | None = Field(None, json_schema_extra=not_null, description="needs DEAFEN_MEMBERS")

    @model_validator(mode="after")
    def _nulls(self) -> ModeratorVoiceFlags:
        no_nulls(self, ("server_mute", "server_deafen"))
        return self

    def changes(self) -> dict[str, bool]:
        return {n: bool(getattr(self, n)) for n in sorted(self.model_fields_set)}


class VoiceMove(BaseModel):
    channel_id: Snowflake = Field(description="a voice room of the same server")


class MediaWebhookAnswer(BaseModel):
    pass
