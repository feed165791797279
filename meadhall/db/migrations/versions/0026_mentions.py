"""Placeholder: filled by the change that owns it.

Revision ID: 0026_mentions
Revises: 0025_cli_outbox
"""

revision = "0026_mentions"
down_revision = "0025_cli_outbox"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
