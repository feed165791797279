"""The fields of each object the API answers and the gateway dispatches: tests assert a payload carries
exactly these (a new field is a decision, not an accident)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

USER_FIELDS = {
    "id", "username", "email", "display_name", "bio", "status", "custom_status", "custom_status_emoji",
    "locale", "timezone", "totp_enabled", "onboarding_completed_at", "is_instance_admin", "badges", "avatar",
    "last_seen_at", "password_reset_required", "created_at",
}
SUMMARY_FIELDS = {
    "id", "username", "display_name", "avatar", "bio", "status", "custom_status", "custom_status_emoji",
    "badges", "created_at", "deleted",
}
MESSAGE_FIELDS = {
    "id", "channel_id", "guild_id", "author", "webhook", "content", "kind", "recipient_id", "system_event",
    "attachment_ids", "attachments", "nonce", "reply_to_id", "referenced_message", "mentions", "mention_channels",
    "mention_everyone", "suppress_embeds", "reactions", "pinned", "created_at", "edited_at",
}
GUILD_FIELDS = {
    "id", "name", "description", "icon_file_id", "banner_file_id", "splash_file_id", "owner_id", "member_count",
    "system_channel_id", "public", "public_invite_code", "is_main", "created_at",
}
SNAPSHOT_FIELDS = GUILD_FIELDS | {"roles", "channels", "emojis", "sounds", "cosmetics", "voice_states", "member"}
CHANNEL_FIELDS = {
    "id", "type", "guild_id", "name", "topic", "position", "parent_id", "slowmode_seconds", "user_limit",
    "background_file_id", "icon_file_id", "dm_owner_id", "permission_overrides", "last_message_id", "created_at",
}
OVERRIDE_FIELDS = {"id", "type", "allow", "deny"}
MEMBER_FIELDS = {"guild_id", "user", "nick", "roles", "joined_at", "timeout_until", "style"}
ROLE_FIELDS = {"id", "guild_id", "name", "color", "position", "permissions", "hoist", "frame_id", "icon_id",
               "is_default"}
READ_STATE_FIELDS = {"channel_id", "last_read_message_id", "mention_count", "updated_at"}


def is_id(value: Any) -> bool:
    """Snowflakes travel as decimal strings (docs/reference/events.md)."""
    return isinstance(value, str) and value.isdigit()


def parse_ts(value: str) -> datetime:
    """A timestamp as answered (ISO 8601, UTC, `Z`)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
