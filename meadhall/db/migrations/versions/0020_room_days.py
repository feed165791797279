"""The instance statistics without a pass over every message or account: a table `room_days`, the messages
of each room per UTC day, kept exact by triggers on `messages` (the statements are frozen in
meadhall.db.migrations.frozen.room_days_0020) and filled from the messages that exist; and three partial indexes on `users` that the account
tallies count instead of reading every account (present accounts by last activity, banned and deleted ones).

Revision ID: 0020_room_days
Revises: 0019_user_search_short_parts
"""

import sqlalchemy as sa
from alembic import op

from meadhall.db.migrations.frozen import room_days_0020

revision = "0020_room_days"
down_revision = "0019_user_search_short_parts"
branch_labels = None
depends_on = None

_USER_INDEXES = (
    ("ix_users_present_last_seen_at", "last_seen_at", "deleted_at IS NULL"),
    ("ix_users_banned", "id", "banned_at IS NOT NULL"),
    ("ix_users_deleted", "id", "deleted_at IS NOT NULL"),
)


def upgrade() -> None:
    op.create_table(
        "room_days",
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("day", sa.Integer(), nullable=False),
        sa.Column("messages", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["channel_id"], ["channels.id"], name="fk_room_days_channel_id_channels",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("channel_id", "day", name="pk_room_days"),
        sqlite_with_rowid=False,
        if_not_exists=True,
    )
    room_days_0020.create_room_days_triggers(op)
    for name, column, condition in _USER_INDEXES:
        op.create_index(name, "users", [column], sqlite_where=sa.text(condition),
                        postgresql_where=sa.text(condition), if_not_exists=True)


def downgrade() -> None:
    for name, _column, _condition in _USER_INDEXES:
        op.drop_index(name, "users", if_exists=True)
    room_days_0020.drop_room_days_triggers(op)
    op.drop_table("room_days")
