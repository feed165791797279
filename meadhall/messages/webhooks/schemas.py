"""Request and response models of the webhook routes (the OpenAPI source; docs/webhooks.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from meadhall.api.openapi import not_null
from meadhall.core.limits import ATTACHMENTS_PER_MESSAGE
from meadhall.core.text import check_single_line
from meadhall.guilds.schemas import no_nulls
from meadhall.messages.schemas import Content, Snowflake

WebhookName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80),
                        AfterValidator(check_single_line)]
# `\S` admits control characters (a NUL cannot even be stored on PostgreSQL): refused like in any text field.
AvatarUrl = Annotated[str, StringConstraints(max_length=2048, pattern=r"^[hH][tT][tT][pP][sS]?://[^\s/?#]+\S*$"),
                      AfterValidator(check_single_line)]


class Webhook(BaseModel):
    id: str
    guild_id: str
    channel_id: str
    name: str
    avatar: str | None = Field(description="File id of the avatar (purpose `avatar`), or null")
    creator_id: str
    created_at: str
    token: str | None = Field(description="Only in the answers of createWebhook and regenerateWebhookToken")
    url: str | None = Field(description="`<PUBLIC_URL>/api/v1/webhooks/<id>/<token>` when `token` is present")


class WebhookResponse(BaseModel):
    webhook: Webhook


class WebhooksResponse(BaseModel):
    webhooks: list[Webhook]


class WebhookCreate(BaseModel):
    name: WebhookName


class WebhookPatch(BaseModel):
    # Absent means unchanged; null is refused.
    name: WebhookName | None = Field(None, json_schema_extra=not_null)
    channel_id: Snowflake | None = Field(None, json_schema_extra=not_null,
                                         description="A text room of the same server: moves the webhook there")

    @model_validator(mode="after")
    def _nulls(self) -> WebhookPatch:
        no_nulls(self, ("name", "channel_id"))
        return self


class WebhookExecute(BaseModel):
    # Text (not only whitespace) or at least one attachment, like a member's message.
    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": ["content"], "properties": {"content": {"type": "string", "pattern": "\\S"}}},
        {"required": ["attachment_ids"], "properties": {"attachment_ids": {"type": "array", "minItems": 1}}},
    ]})

    content: Content = Field("", description="Sent as written: webhook messages are never read as slash commands")
    username: WebhookName | None = Field(None, description="Overrides the webhook's name on this message")
    avatar_url: AvatarUrl | None = Field(None, description="An http or https URL that overrides the webhook's "
                                                           "avatar on this message")
    attachment_ids: Annotated[list[Snowflake], Field(max_length=ATTACHMENTS_PER_MESSAGE,
                                                     json_schema_extra={"uniqueItems": True})] = Field(
        [], description="Unsent uploads of the webhook's creator to this room")
