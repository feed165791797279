"""Request and response models of message routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from meadhall.accounts.schemas import UserSummary
from meadhall.core.limits import ATTACHMENTS_PER_MESSAGE, MESSAGE_LENGTH
from meadhall.core.text import check_multiline, check_single_line

Snowflake = Annotated[str, StringConstraints(pattern=r"^\d{1,20}$")]
Content = Annotated[str, StringConstraints(max_length=MESSAGE_LENGTH), AfterValidator(check_multiline)]


class MessageCreate(BaseModel):
    # Text (not only whitespace) or at least one attachment.
    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": ["content"], "properties": {"content": {"type": "string", "pattern": "\\S"}}},
        {"required": ["attachment_ids"], "properties": {"attachment_ids": {"type": "array", "minItems": 1}}},
    ]})

    content: Content = ""
    attachment_ids: Annotated[list[Snowflake], Field(max_length=ATTACHMENTS_PER_MESSAGE,
                                                     json_schema_extra={"uniqueItems": True})] = []
    nonce: Annotated[str, StringConstraints(max_length=64), AfterValidator(check_single_line)] | None = None
    reply_to_id: Snowflake | None = None


class MessageEdit(BaseModel):
    content: Content


class Reaction(BaseModel):
    emoji: str
    count: int
    me: bool


class Message(BaseModel):
    id: str
    channel_id: str
    guild_id: str | None
    author: dict[str, Any] | None
    webhook: dict[str, Any] | None
    content: str
    kind: str
    recipient_id: str | None
    system_event: dict[str, Any] | None
    attachment_ids: list[str]
    attachments: list[dict[str, Any]]
    nonce: str | None
    reply_to_id: str | None
    referenced_message: dict[str, Any] | None
    mentions: list[str]
    mention_channels: list[str]
    mention_everyone: bool
    suppress_embeds: bool
    reactions: list[Reaction]
    pinned: bool
    created_at: str
    edited_at: str | None


class MessageResponse(BaseModel):
    message: Message


class MessagesResponse(BaseModel):
    messages: list[Message]
    has_more: bool


class AckRequest(BaseModel):
    message_id: Snowflake | None = None


class ReadState(BaseModel):
    channel_id: str
    last_read_message_id: str | None
    mention_count: int
    updated_at: str


class ReadStateResponse(BaseModel):
    read_state: ReadState


class ReadStatesResponse(BaseModel):
    read_states: list[ReadState]


class ReactionUsersResponse(BaseModel):
    users: list[UserSummary]
    has_more: bool


class PinsResponse(BaseModel):
    messages: list[Message]
