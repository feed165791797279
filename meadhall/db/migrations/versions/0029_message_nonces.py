"""`message_nonces`: a send's nonce, written in the send's transaction, so a retry finds the first message in the
database whichever node took the first attempt (docs/mentions.md, "Repeated sends"). Nonces kept in Redis before
are not carried over: for the 5 minutes after the upgrade, a retry of a message sent before it is a new message.

Revision ID: 0029_message_nonces
Revises: 0028_notification_settings
"""

import sqlalchemy as sa
from alembic import op

revision = "0029_message_nonces"
down_revision = "0028_notification_settings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "message_nonces",
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("author_id", sa.BigInteger(), nullable=False),
        sa.Column("nonce", sa.String(length=64), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("channel_id", "author_id", "nonce", name="pk_message_nonces"),
        if_not_exists=True,
    )
    op.create_index("ix_message_nonces_created_at", "message_nonces", ["created_at"], if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_message_nonces_created_at", "message_nonces", if_exists=True)
    op.drop_table("message_nonces")
