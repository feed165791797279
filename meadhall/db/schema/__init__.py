"""Core tables on one MetaData with a naming convention (constraint names stable across databases).

The tables here describe the current layout; migrations under `db/migrations/versions` build it step
by step and are never rewritten once shipped.
"""

from meadhall.db.schema.accounts import backup_codes, security_events, sessions, users
from meadhall.db.schema.audit import audit_log, instance_settings
from meadhall.db.schema.base import metadata
from meadhall.db.schema.customisation import cosmetics, emojis, sounds, user_styles
from meadhall.db.schema.files import files
from meadhall.db.schema.guilds import (
    channels,
    guild_bans,
    guilds,
    invites,
    member_roles,
    members,
    permission_overrides,
    roles,
    templates,
)
from meadhall.db.schema.imports import import_links
from meadhall.db.schema.messages import messages, reactions, read_states
from meadhall.db.schema.notifications import guild_notification_settings, room_notification_settings
from meadhall.db.schema.outbound import link_previews, push_subscriptions
from meadhall.db.schema.outbox import event_outbox
from meadhall.db.schema.passkeys import passkeys
from meadhall.db.schema.push_outbox import push_outbox
from meadhall.db.schema.social import (
    call_participants,
    calls,
    dm_participants,
    relationship_stamps,
    relationships,
)
from meadhall.db.schema.stats import room_days
from meadhall.db.schema.voice import media_webhook_events
from meadhall.db.schema.webhooks import webhooks

__all__ = [
    "metadata",
    "audit_log",
    "instance_settings",
    "users",
    "sessions",
    "backup_codes",
    "security_events",
    "guilds",
    "roles",
    "channels",
    "permission_overrides",
    "members",
    "member_roles",
    "invites",
    "guild_bans",
    "templates",
    "messages",
    "reactions",
    "read_states",
    "room_days",
    "files",
    "relationship_stamps",
    "relationships",
    "dm_participants",
    "calls",
    "call_participants",
    "emojis",
    "sounds",
    "cosmetics",
    "user_styles",
    "media_webhook_events",
    "link_previews",
    "push_subscriptions",
    "guild_notification_settings",
    "room_notification_settings",
    "webhooks",
    "passkeys",
    "event_outbox",
    "push_outbox",
    "import_links",
]
