"""Message search: an FTS5 trigram table over messages.content_norm, kept by triggers, on SQLite; pg_trgm
and a GIN trigram index on messages.content_norm on PostgreSQL. The statements live in meadhall.db.dialect,
the only module that knows the database.

Revision ID: 0006_message_search
Revises: 0005_messages
"""

from alembic import op

from meadhall.db import dialect

revision = "0006_message_search"
down_revision = "0005_messages"
branch_labels = None
depends_on = None


def upgrade() -> None:
    dialect.create_message_search(op)


def downgrade() -> None:
    dialect.drop_message_search(op)
