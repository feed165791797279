"""Placeholder: filled by the change that owns it.

Revision ID: 0024_push_subscription_sessions
Revises: 0023_user_style_count
"""

revision = "0024_push_subscription_sessions"
down_revision = "0023_user_style_count"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
