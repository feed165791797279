"""Accounts: users, sessions, backup codes, security events.

Revision ID: 0003_accounts
Revises: 0002_drop_identity_links
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_accounts"
down_revision = "0002_drop_identity_links"
branch_labels = None
depends_on = None


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.BigInteger, autoincrement=False, nullable=False),
        sa.Column("username", sa.String(32), nullable=False),
        sa.Column("username_norm", sa.String(64), nullable=False),
        sa.Column("email_enc", sa.LargeBinary, nullable=False),
        sa.Column("email_index", sa.String(64), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("display_name", sa.String(64), nullable=False),
        sa.Column("display_name_norm", sa.String(128), nullable=False),
        sa.Column("bio", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("custom_status", sa.String(256), nullable=True),
        sa.Column("custom_status_emoji", sa.String(128), nullable=True),
        sa.Column("locale", sa.String(16), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("avatar_file_id", sa.BigInteger, nullable=True),
        sa.Column("totp_enabled", sa.Boolean, nullable=False),
        sa.Column("totp_secret_enc", sa.LargeBinary, nullable=True),
        sa.Column("totp_last_step", sa.BigInteger, nullable=True),
        sa.Column("totp_pending_enc", sa.LargeBinary, nullable=True),
        _ts("totp_pending_expires_at", True),
        _ts("onboarding_completed_at", True),
        sa.Column("is_instance_admin", sa.Boolean, nullable=False),
        sa.Column("password_reset_required", sa.Boolean, nullable=False),
        _ts("last_seen_at"),
        _ts("created_at"),
        _ts("banned_at", True),
        sa.Column("ban_reason", sa.Text, nullable=True),
        sa.Column("banned_by", sa.BigInteger, nullable=True),
        _ts("deleted_at", True),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("username_norm", name="uq_users_username_norm"),
        sa.UniqueConstraint("email_index", name="uq_users_email_index"),
        if_not_exists=True,
    )
    op.create_table(
        "sessions",
        sa.Column("id", sa.BigInteger, autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger, nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        _ts("token_created_at"),
        sa.Column("prev_token_hash", sa.String(64), nullable=True),
        _ts("prev_valid_until", True),
        _ts("created_at"),
        _ts("last_used_at"),
        sa.Column("ip", sa.String(64), nullable=False),
        sa.Column("user_agent", sa.String(512), nullable=True),
        sa.Column("method", sa.String(16), nullable=False),
        _ts("step_up_expires_at", True),
        sa.PrimaryKeyConstraint("id", name="pk_sessions"),
        sa.UniqueConstraint("token_hash", name="uq_sessions_token_hash"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_sessions_user_id_users", ondelete="CASCADE"),
        if_not_exists=True,
    )
    op.create_index("ix_sessions_user_id", "sessions", ["user_id"], if_not_exists=True)
    op.create_index("ix_sessions_prev_token_hash", "sessions", ["prev_token_hash"], if_not_exists=True)
    op.create_table(
        "backup_codes",
        sa.Column("id", sa.BigInteger, autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger, nullable=False),
        sa.Column("code_hash", sa.String(255), nullable=False),
        _ts("used_at", True),
        sa.PrimaryKeyConstraint("id", name="pk_backup_codes"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_backup_codes_user_id_users", ondelete="CASCADE"
        ),
        if_not_exists=True,
    )
    op.create_index("ix_backup_codes_user_id", "backup_codes", ["user_id"], if_not_exists=True)
    op.create_table(
        "security_events",
        sa.Column("id", sa.BigInteger, autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger, nullable=True),
        sa.Column("type", sa.String(48), nullable=False),
        sa.Column("ip", sa.String(64), nullable=False),
        sa.Column("user_agent", sa.String(512), nullable=True),
        sa.Column("data", sa.JSON, nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_security_events"),
        if_not_exists=True,
    )
    op.create_index(
        "ix_security_events_user_id_id", "security_events", ["user_id", "id"], if_not_exists=True
    )


def downgrade() -> None:
    for name in ("security_events", "backup_codes", "sessions", "users"):
        op.drop_table(name)
