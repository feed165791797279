"""`event_outbox`: the events of a CLI run, written in the transaction of its change and published by the
serving process that drains the table (docs/architecture.md, "CLI effects reach live connections").

Revision ID: 0025_cli_outbox
Revises: 0024_push_subscription_sessions
"""

import sqlalchemy as sa
from alembic import op

revision = "0025_cli_outbox"
down_revision = "0024_push_subscription_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "event_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_event_outbox"),
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_table("event_outbox")
