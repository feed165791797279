"""Instance user search for parts of one or two characters, which the trigram objects of 0018 cannot look
up: a narrow index users (id, username_norm, display_name_norm, banned_at) that the scan reads instead of
the rows, newest first; and a table counting, for every string of one or two characters, the accounts
that have it in a name, kept by triggers on `users`, which gives such a part's total without a scan. The
statements, per database, are frozen in meadhall.db.migrations.frozen.user_grams_0019.

Revision ID: 0019_user_search_short_parts
Revises: 0018_user_search
"""

from alembic import op

from meadhall.db.migrations.frozen import user_grams_0019

revision = "0019_user_search_short_parts"
down_revision = "0018_user_search"
branch_labels = None
depends_on = None


def upgrade() -> None:
    user_grams_0019.create_user_list_index(op)
    user_grams_0019.create_user_grams(op)


def downgrade() -> None:
    user_grams_0019.drop_user_grams(op)
    user_grams_0019.drop_user_list_index(op)
