"""Instance user search for parts of one or two characters, which the trigram objects of 0018 cannot look
up: a narrow index users (id, username_norm, display_name_norm, banned_at) that the scan reads instead of
the rows, newest first; and a table counting, for every string of one or two characters, the accounts
that have it in a name, kept by triggers on `users`, which gives such a part's total without a scan. The
statements live in meadhall.db.dialect, with the other user-search objects.

Revision ID: 0019_user_search_short_parts
Revises: 0018_user_search
"""

from alembic import op

from meadhall.db import dialect

revision = "0019_user_search_short_parts"
down_revision = "0018_user_search"
branch_labels = None
depends_on = None


def upgrade() -> None:
    dialect.create_user_list_index(op)
    dialect.create_user_grams(op)


def downgrade() -> None:
    dialect.drop_user_grams(op)
    dialect.drop_user_list_index(op)
