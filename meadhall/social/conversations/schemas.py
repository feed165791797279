"""Request and response models of conversation routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, StringConstraints, field_validator

from meadhall.accounts.schemas import UserSummary
from meadhall.core.ids import parse_id
from meadhall.core.limits import GROUP_DM_MAX_INVITED, GROUP_DM_MIN_INVITED
from meadhall.core.text import check_single_line
from meadhall.guilds.rooms.schemas import Channel
from meadhall.guilds.schemas import Snowflake
from meadhall.messages.schemas import Message

GroupName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
                      AfterValidator(check_single_line)]


class OpenConversation(BaseModel):
    recipient_id: Snowflake

    def recipient(self) -> int:
        found = parse_id(self.recipient_id)
        assert found is not None  # the pattern admits only ids parse_id reads
        return found


class GroupCreate(BaseModel):
    recipient_ids: Annotated[list[Snowflake], Field(min_length=GROUP_DM_MIN_INVITED, max_length=GROUP_DM_MAX_INVITED,
                                                    json_schema_extra={"uniqueItems": True})]
    name: GroupName | None = None

    @field_validator("recipient_ids")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len({parse_id(v) for v in value}) != len(value):
            raise ValueError("must name distinct users")
        return value

    def recipients(self) -> list[int]:
        return [int(i) for i in (parse_id(v) for v in self.recipient_ids) if i is not None]


class Conversation(BaseModel):
    id: str
    type: str
    guild_id: None
    is_group: bool
    name: str | None
    icon_file_id: str | None
    dm_owner_id: str | None
    owner_id: str | None
    member_count: int
    members: list[UserSummary]
    counterpart: UserSummary | None
    avatar: str | None
    status: str | None
    last_message: Message | None
    last_message_id: str | None
    created_at: str


class ConversationResponse(BaseModel):
    channel: Conversation


class ConversationsResponse(BaseModel):
    channels: list[Conversation]


class AnyChannelResponse(BaseModel):
    """A guild room (Channel) or a conversation (Conversation), by `type`."""

    channel: Channel | Conversation
