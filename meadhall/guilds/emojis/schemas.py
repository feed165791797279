"""Request and response models of the emoji routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, StringConstraints

EMOJI_NAME_PATTERN = r"^[a-zA-Z0-9_]{2,32}$"
EmojiName = Annotated[str, StringConstraints(pattern=EMOJI_NAME_PATTERN)]


class Emoji(BaseModel):
    id: str
    guild_id: str
    name: str
    file_id: str
    token: str
    animated: bool
    creator_id: str | None
    created_at: str


class EmojiResponse(BaseModel):
    emoji: Emoji


class EmojisResponse(BaseModel):
    emojis: list[Emoji]


class EmojiPatch(BaseModel):
    name: EmojiName
