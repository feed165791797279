"""Accounts: users, sessions, backup codes, security events (the OpenAPI document)."""

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    false,
)

from meadhall.db.schema.base import id_column, metadata, ts_column

users = Table(
    "users",
    metadata,
    id_column(),
    Column("username", String(32), nullable=False),
    Column("username_norm", String(64), nullable=False, unique=True),
    Column("email_enc", LargeBinary, nullable=False),
    Column("email_index", String(64), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=False),
    Column("display_name", String(64), nullable=False),
    Column("display_name_norm", String(128), nullable=False),
    Column("bio", Text, nullable=False, default=""),
    Column("status", String(16), nullable=False, default="online"),
    Column("custom_status", String(256), nullable=True),
    Column("custom_status_emoji", String(128), nullable=True),
    Column("locale", String(16), nullable=False, default="en"),
    Column("timezone", String(64), nullable=False, default="Europe/Moscow"),
    Column("avatar_file_id", BigInteger, nullable=True),
    Column("totp_enabled", Boolean, nullable=False, default=False),
    Column("totp_secret_enc", LargeBinary, nullable=True),
    Column("totp_last_step", BigInteger, nullable=True),
    Column("totp_pending_enc", LargeBinary, nullable=True),
    ts_column("totp_pending_expires_at", nullable=True),
    ts_column("onboarding_completed_at", nullable=True),
    Column("is_instance_admin", Boolean, nullable=False, default=False),
    # An imported author (migration 0031, docs/migrating.md): holds a source's history, never signs in.
    Column("imported", Boolean, nullable=False, default=False, server_default=false()),
    Column("password_reset_required", Boolean, nullable=False, default=False),
    ts_column("last_seen_at"),
    ts_column("created_at"),
    ts_column("banned_at", nullable=True),
    Column("ban_reason", Text, nullable=True),
    Column("banned_by", BigInteger, nullable=True),
    ts_column("deleted_at", nullable=True),
    # How many personal styles (`user_styles` rows, any scope) the user has, kept by triggers (migration
    # 0023): a profile change of a user with none skips both style lookups of its events.
    Column("style_count", Integer, nullable=False, default=0, server_default="0"),
)

sessions = Table(
    "sessions",
    metadata,
    id_column(),
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    ts_column("token_created_at"),
    Column("prev_token_hash", String(64), nullable=True),
    ts_column("prev_valid_until", nullable=True),
    ts_column("created_at"),
    ts_column("last_used_at"),
    Column("ip", String(64), nullable=False),
    Column("user_agent", String(512), nullable=True),
    Column("method", String(16), nullable=False),
    ts_column("step_up_expires_at", nullable=True),
    Index("ix_sessions_user_id", "user_id"),
    Index("ix_sessions_prev_token_hash", "prev_token_hash"),
)

backup_codes = Table(
    "backup_codes",
    metadata,
    id_column(),
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("code_hash", String(255), nullable=False),
    ts_column("used_at", nullable=True),
    Index("ix_backup_codes_user_id", "user_id"),
)

security_events = Table(
    "security_events",
    metadata,
    id_column(),
    Column("user_id", BigInteger, nullable=True),
    Column("type", String(48), nullable=False),
    Column("ip", String(64), nullable=False),
    Column("user_agent", String(512), nullable=True),
    Column("data", JSON, nullable=False),
    ts_column("created_at"),
    Index("ix_security_events_user_id_id", "user_id", "id"),
)

# One row (id 1): a counter that triggers (migration 0009) raise whenever a session is deleted or its
# token or step-up changes, or an account's ban, deletion or instance-administrator flag changes. The
# session cache (auth/sessions.py) trusts a cached session only while this value is unchanged.
auth_epoch = Table(
    "auth_epoch",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("value", BigInteger, nullable=False),
)

__all__ = ["users", "sessions", "backup_codes", "security_events", "auth_epoch"]
