"""`users.style_count`: how many personal styles the user has, kept by triggers. A profile change announces the
user's style with each event (MEMBER_UPDATE in every guild, PRESENCE_UPDATE to friends); with none, the two style
lookups are skipped.

Revision ID: 0023_user_style_count
Revises: 0022_relationship_stamps
"""

import sqlalchemy as sa
from alembic import op

from meadhall.db.migrations.frozen import style_counts_0023

revision = "0023_user_style_count"
down_revision = "0022_relationship_stamps"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("users")}
    if "style_count" not in columns:
        with op.batch_alter_table("users") as batch:
            batch.add_column(sa.Column("style_count", sa.Integer(), nullable=False, server_default="0"))
    style_counts_0023.create_style_count_triggers(op)


def downgrade() -> None:
    style_counts_0023.drop_style_count_triggers(op)
    # Not batch mode: on SQLite it would rebuild `users` and lose its triggers (search, grams, epoch).
    op.execute("ALTER TABLE users DROP COLUMN style_count")
