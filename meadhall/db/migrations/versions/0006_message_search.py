"""Message search: an FTS5 trigram table over messages.content_norm, kept by triggers, on SQLite; pg_trgm
and a GIN trigram index on messages.content_norm on PostgreSQL. The statements, per database, are frozen
in meadhall.db.migrations.frozen.message_search_0006.

Revision ID: 0006_message_search
Revises: 0005_messages
"""

from alembic import op

from meadhall.db.migrations.frozen import message_search_0006

revision = "0006_message_search"
down_revision = "0005_messages"
branch_labels = None
depends_on = None


def upgrade() -> None:
    message_search_0006.create_message_search(op)


def downgrade() -> None:
    message_search_0006.drop_message_search(op)
