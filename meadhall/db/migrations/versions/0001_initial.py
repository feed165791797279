"""Initial layout: audit log and instance settings.

Revision ID: 0001_initial
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("guild_id", sa.BigInteger, nullable=True),
        sa.Column("actor_id", sa.BigInteger, nullable=True),
        sa.Column("target_type", sa.String(32), nullable=True),
        sa.Column("target_id", sa.BigInteger, nullable=True),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
        if_not_exists=True,
    )
    op.create_index("ix_audit_log_guild_id_id", "audit_log", ["guild_id", "id"], if_not_exists=True)
    op.create_index("ix_audit_log_action_id", "audit_log", ["action", "id"], if_not_exists=True)
    op.create_table(
        "instance_settings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_instance_settings"),
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_table("instance_settings")
    op.drop_table("audit_log")
