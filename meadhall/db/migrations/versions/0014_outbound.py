"""The link-preview cache and Web Push subscriptions (docs/outbound.md, docs/push.md).

Revision ID: 0014_outbound
Revises: 0013_voice
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_outbound"
down_revision = "0013_voice"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "link_previews",
        sa.Column("url_hash", sa.String(length=64), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("card", sa.JSON(), nullable=True),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("url_hash", name="pk_link_previews"),
        if_not_exists=True,
    )
    op.create_index("ix_link_previews_expires_at", "link_previews", ["expires_at"], unique=False,
                    if_not_exists=True)
    op.create_table(
        "push_subscriptions",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("endpoint", sa.String(length=2048), nullable=False),
        sa.Column("p256dh", sa.String(length=128), nullable=False),
        sa.Column("auth", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("failure_count", sa.Integer(), nullable=False),
        sa.Column("last_delivery_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_push_subscriptions_user_id_users",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_push_subscriptions"),
        if_not_exists=True,
    )
    op.create_index("uq_push_subscriptions_endpoint", "push_subscriptions", ["endpoint"], unique=True,
                    if_not_exists=True)
    op.create_index("ix_push_subscriptions_user_id", "push_subscriptions", ["user_id"], unique=False,
                    if_not_exists=True)


def downgrade() -> None:
    pass
