"""`push_outbox`: Web Push notifications waiting for delivery, written in the transaction of the message they
announce and claimed with a lease, so a stop or a kill of a node delays a notification but never loses it
(docs/push.md, "A durable queue").

Revision ID: 0030_push_outbox
Revises: 0029_message_nonces
"""

import sqlalchemy as sa
from alembic import op

revision = "0030_push_outbox"
down_revision = "0029_message_nonces"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "push_outbox",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("available_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_by", sa.String(length=32), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_push_outbox"),
        if_not_exists=True,
    )
    op.create_index("ix_push_outbox_available_at", "push_outbox", ["available_at"], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_push_outbox_available_at", "push_outbox", if_exists=True)
    op.drop_table("push_outbox")
