"""Request and response models of call routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, StrictBool, model_validator

from meadhall.api.openapi import not_null
from meadhall.guilds.schemas import no_nulls

CallState = Literal["ringing", "joined", "left", "declined", "missed"]
CallStatus = Literal["ringing", "active", "ended", "missed", "declined"]
EndReason = Literal["completed", "canceled", "timeout", "declined", "conversation_deleted"]
Media = Literal["audio", "video"]


class CallStart(BaseModel):
    media: Media = "audio"


class CallFlags(BaseModel):
    # Absent means unchanged; null is refused, and so are "yes", 0 and 1 (the document says boolean).
    microphone: StrictBool | None = Field(None, json_schema_extra=not_null)
    camera: StrictBool | None = Field(None, json_schema_extra=not_null)
    screen: StrictBool | None = Field(None, json_schema_extra=not_null)

    @model_validator(mode="after")
    def _nulls(self) -> CallFlags:
        no_nulls(self, ("microphone", "camera", "screen"))
        return self

    def changes(self) -> dict[str, bool]:
        return {n: bool(getattr(self, n)) for n in sorted(self.model_fields_set)}


class CallParticipant(BaseModel):
    user_id: str
    state: CallState
    microphone: bool
    camera: bool
    screen: bool
    joined_at: str | None
    left_at: str | None


class Call(BaseModel):
    id: str
    channel_id: str
    initiator_id: str
    status: CallStatus
    media: Media
    created_at: str
    started_at: str | None
    ended_at: str | None
    duration_seconds: int
    end_reason: EndReason | None
    participants: list[CallParticipant]


class CallResponse(BaseModel):
    call: Call


class CallCredentialsResponse(BaseModel):
    """The call and what its media-server room takes: a signed token for `room`, valid 10 minutes, at `url`."""

    call: Call
    token: str
    url: str
    room: str


class CallsResponse(BaseModel):
    calls: list[Call]
    has_more: bool
