"""The JSON shapes of an archive's members (docs/migrating.md, "Between Meadhall instances"). Ids are strings,
as everywhere in Meadhall's JSON; times are ISO 8601 with their offset. The import validates every member
against these before it writes anything; unknown fields are refused, so a hand-edited archive is noticed."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints

Id = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,18}$")]
Digest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Count = Annotated[int, Field(ge=0)]


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(Shape):
    public_url: str
    meadhall_version: str
    schema_revision: str | None


class Counts(Shape):
    rooms: Count
    messages: Count
    files: Count
    users: Count


class Manifest(Shape):
    format: Literal["meadhall-guild"]
    version: Literal[1]
    exported_at: AwareDatetime
    source: Source
    counts: Counts
    sha256: dict[str, Digest]


class GuildInfo(Shape):
    id: Id
    name: str
    description: str | None
    icon_file_id: Id | None
    banner_file_id: Id | None
    splash_file_id: Id | None
    owner_id: Id
    system_channel_id: Id | None
    public: bool
    created_at: AwareDatetime


class Role(Shape):
    id: Id
    name: str
    color: int
    position: int
    permissions: Annotated[int, Field(ge=0)]
    hoist: bool
    frame_id: Id | None
    icon_id: Id | None
    is_default: bool
    created_at: AwareDatetime


class Override(Shape):
    target_id: Id
    kind: Literal["role", "member"]
    allow: Annotated[int, Field(ge=0)]
    deny: Annotated[int, Field(ge=0)]


class Room(Shape):
    id: Id
    type: Literal["text", "voice", "category"]
    name: str | None
    topic: str | None
    position: int
    parent_id: Id | None
    slowmode_seconds: Count
    user_limit: Count | None
    background_file_id: Id | None
    created_at: AwareDatetime
    overrides: list[Override]


class Emoji(Shape):
    id: Id
    name: str
    file_id: Id
    animated: bool
    creator_id: Id | None
    created_at: AwareDatetime


class Sound(Shape):
    id: Id
    kind: str
    name: str
    emoji: str | None
    palette_event: str | None
    file_id: Id
    duration_ms: Count | None
    creator_id: Id | None
    created_at: AwareDatetime


class Cosmetic(Shape):
    id: Id
    kind: str
    name: str
    file_id: Id
    created_at: AwareDatetime


class Member(Shape):
    user_id: Id
    nick: str | None
    joined_at: AwareDatetime
    timeout_until: AwareDatetime | None
    role_ids: list[Id]


class Ban(Shape):
    user_id: Id
    reason: str | None
    author_id: Id | None
    created_at: AwareDatetime


class Pin(Shape):
    room_id: Id
    message_id: Id
    pinned_at: AwareDatetime | None


class Webhook(Shape):
    """A room's webhook without its token (nor the token's digest): an import gives it none, so it executes
    nothing until an administrator makes a new one."""

    id: Id
    room_id: Id
    name: str
    avatar_file_id: Id | None
    creator_id: Id | None
    created_at: AwareDatetime


class StoredFile(Shape):
    """A file's row; its content is the member `files/<id>`."""

    id: Id
    purpose: str
    uploader_id: Id | None
    original_name: str
    content_type: str
    size: Count
    sha256: Digest
    meta: dict[str, Any]
    owner: str
    owner_id: Id | None
    room_id: Id | None
    position: int | None
    created_at: AwareDatetime


class GuildDoc(Shape):
    guild: GuildInfo
    roles: list[Role]
    categories: list[Room]
    rooms: list[Room]
    emojis: list[Emoji]
    sounds: list[Sound]
    cosmetics: list[Cosmetic]
    members: list[Member]
    bans: list[Ban]
    pins: list[Pin]
    webhooks: list[Webhook]
    files: list[StoredFile]


class UserSummary(Shape):
    """A public profile: what any member of the guild could see of the user, nothing more."""

    id: Id
    username: str
    display_name: str
    avatar_file_id: Id | None
    bio: str


class UsersDoc(Shape):
    users: list[UserSummary]


class SystemEvent(Shape):
    type: str
    user_id: Id | None
    actor_id: Id | None
    via: str | None


class WebhookSnapshot(Shape):
    id: Id
    name: str | None
    avatar: str | None


class Reaction(Shape):
    emoji: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    user_ids: Annotated[list[Id], Field(min_length=1)]


class Message(Shape):
    id: Id
    author_id: Id | None
    content: str
    kind: str
    system_event: SystemEvent | None
    recipient_id: Id | None
    reply_to_id: Id | None
    webhook: WebhookSnapshot | None
    attachment_ids: list[Id]
    reactions: list[Reaction]
    mentions: list[Id]
    mention_channels: list[Id]
    mention_everyone: bool
    suppress_embeds: bool
    pinned: bool
    pinned_at: AwareDatetime | None
    created_at: AwareDatetime
    edited_at: AwareDatetime | None
