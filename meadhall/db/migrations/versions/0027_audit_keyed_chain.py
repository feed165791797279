"""Placeholder: filled by the change that owns it.

Revision ID: 0027_audit_keyed_chain
Revises: 0026_mentions
"""

revision = "0027_audit_keyed_chain"
down_revision = "0026_mentions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
