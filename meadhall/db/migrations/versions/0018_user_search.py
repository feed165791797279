"""User search for instance administration: an FTS5 trigram table over users.username_norm and
display_name_norm, kept by triggers, on SQLite; GIN trigram indexes on both columns on PostgreSQL. The
statements, per database, are frozen in meadhall.db.migrations.frozen.user_search_0018.

Revision ID: 0018_user_search
Revises: 0017_audit_chain
"""

from alembic import op

from meadhall.db.migrations.frozen import user_search_0018

revision = "0018_user_search"
down_revision = "0017_audit_chain"
branch_labels = None
depends_on = None


def upgrade() -> None:
    user_search_0018.create_user_search(op)


def downgrade() -> None:
    user_search_0018.drop_user_search(op)
