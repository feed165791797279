from __future__ import annotations

from pydantic import BaseModel


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    status: str
    checks: dict[str, str]


class Features(BaseModel):
    registration_enabled: bool
    voice_enabled: bool
    web_push_enabled: bool
    unfurl_enabled: bool
    passkeys_enabled: bool


class Limits(BaseModel):
    message_length: int
    max_upload_size: int
    attachments_per_message: int
    avatar_max_bytes: int
    guild_image_max_bytes: int
    emoji_max_bytes: int
    sound_max_bytes: int
    gallery_max_bytes: int
    emojis_per_guild: int
    soundboard_sounds_per_guild: int
    interface_sounds_per_guild: int
    group_dm_min_invited: int
    group_dm_max_invited: int
    password_min_length: int
    edit_window_seconds: int


class Meta(BaseModel):
    version: str
    features: Features
    voice_url: str | None = None
    limits: Limits


class GatewayInfo(BaseModel):
    url: str
