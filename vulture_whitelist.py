"""What vulture (`make lint`, `[tool.vulture]` in pyproject.toml) cannot see being used. Not imported by anything:
vulture reads each name below as a use. A name belongs here only with its reason; dead code is deleted instead."""

# ruff: noqa

# Alembic reads these of every revision module (meadhall/db/migrations/versions/).
revision
down_revision
branch_labels
depends_on
upgrade
downgrade
run_args  # the signature of the on_version_apply callback (meadhall/db/migrations/env.py)

# SQLAlchemy calls these of the inline SQLite driver (meadhall/db/sqlite_inline.py) and of its engine events.
is_async
supports_statement_cache
_.get_pool_class
_.get_driver_connection
_._async_soft_close
_.fetchmany
_.isolation_level

# Read by the frameworks they are set for: Starlette runs a response's `background`; logging skips a
# `disabled` logger.
_.background
_.disabled

# Pydantic reads `model_config` of each model.
model_config

# The gateway's opcode and close-code table (docs/gateway.md), kept whole though the service writes op 0 and
# close 1000 without naming them.
OP_DISPATCH
CLOSE_NORMAL

# Used by the tests only: the clock tests move, the schema-drift check, the per-test reset, whether a user is
# connected to a hub.
MovableClock
is_search_object
truncate_all
_.connected

# Fields of TypedDicts, dataclasses and response models: rows are read by key and models serialised by field,
# which vulture does not follow.
attachments_per_message
audit_entries
avatar_max_bytes
ban
ban_reason
blocked
code_hash
cosmetic
custom_name
devices
dm_owner_id
edit_window_seconds
emoji_max_bytes
emojis_per_guild
end_reason
ended_at
exported_at
features
fetched_at
from_
gallery_max_bytes
group_dm_max_invited
group_dm_min_invited
guild_image_max_bytes
has_attachments
has_private
interface_sounds_per_guild
last_delivery_at
last_message
left_at
max_upload_size
meadhall_version
message_length
message_version
onboarding_completed_at
outgoing
owner_key
passkey
password_min_length
password_reset_required
public_invite_code
public_url
qr_png
read_state
referenced_message
registration_enabled
rel_since
rel_type
relationship
sound_max_bytes
soundboard_sounds_per_guild
source_guild_id
started_at
stats
style_count
subscription
token_created_at
totp_pending_enc
totp_pending_expires_at
totp_secret_enc
unfurl_enabled
voice_state
voice_states
voice_url
webhook_avatar
webhook_name

# uvicorn builds the gateway's WebSocket protocol from its import string (`ws=`, gateway/wire.py PROTOCOL) and
# calls `put_nowait` on the protocol's received-message mailbox.
GatewayWebSocketProtocol
_.put_nowait
