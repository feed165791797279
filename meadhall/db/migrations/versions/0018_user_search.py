"""User search for instance administration: an FTS5 trigram table over users.username_norm and
display_name_norm, kept by triggers, on SQLite; GIN trigram indexes on both columns on PostgreSQL. The
statements live in meadhall.db.dialect, the only module that knows the database.

Revision ID: 0018_user_search
Revises: 0017_audit_chain
"""

from alembic import op

from meadhall.db import dialect

revision = "0018_user_search"
down_revision = "0017_audit_chain"
branch_labels = None
depends_on = None


def upgrade() -> None:
    dialect.create_user_search(op)


def downgrade() -> None:
    dialect.drop_user_search(op)
