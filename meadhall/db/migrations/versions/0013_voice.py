"""The media-server webhook journal (docs/voice.md).

Revision ID: 0013_voice
Revises: 0012_customisation
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_voice"
down_revision = "0012_customisation"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "media_webhook_events",
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("room", sa.String(length=128), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_media_webhook_events"),
        if_not_exists=True,
    )
    op.create_index("ix_media_webhook_events_received_at", "media_webhook_events", ["received_at"], unique=False,
                    if_not_exists=True)


def downgrade() -> None:
    pass
