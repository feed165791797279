"""Placeholder: filled by the change that owns it.

Revision ID: 0025_cli_outbox
Revises: 0024_push_subscription_sessions
"""

revision = "0025_cli_outbox"
down_revision = "0024_push_subscription_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
