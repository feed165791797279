"""`messages.reacted` and `messages.has_attachments`, set by triggers, so that history pages skip the
reaction and file queries for messages that have none; `channels.message_version` and `has_private`, kept
by triggers, so that history pages can be cached.

Revision ID: 0010_message_flags
Revises: 0009_auth_epoch
"""

import sqlalchemy as sa
from alembic import op

from meadhall.db.migrations.frozen import message_flags_0010

revision = "0010_message_flags"
down_revision = "0009_auth_epoch"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("messages")}
    for name in ("reacted", "has_attachments"):
        if name not in columns:
            # A plain ADD COLUMN: a batch operation would rebuild the table on SQLite and lose its search
            # triggers.
            op.add_column("messages", sa.Column(name, sa.Boolean(), nullable=False, server_default=sa.false()))
    room_columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("channels")}
    if "message_version" not in room_columns:
        op.add_column("channels", sa.Column("message_version", sa.BigInteger(), nullable=False, server_default="0"))
    if "has_private" not in room_columns:
        op.add_column("channels", sa.Column("has_private", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute("UPDATE channels SET has_private = true "
               "WHERE id IN (SELECT channel_id FROM messages WHERE kind = 'private')")
    # Messages that already have reactions or files.
    op.execute("UPDATE messages SET reacted = true WHERE id IN (SELECT message_id FROM reactions)")
    op.execute("UPDATE messages SET has_attachments = true "
               "WHERE id IN (SELECT message_id FROM files WHERE message_id IS NOT NULL)")
    message_flags_0010.create_message_flag_triggers(op)


def downgrade() -> None:
    pass
