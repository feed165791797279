"""Counters behind the instance statistics (docs/admin.md, "Statistics")."""

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, PrimaryKeyConstraint, Table

from meadhall.db.schema.accounts import users
from meadhall.db.schema.base import metadata

# Messages per room and UTC day of their id, kept exactly by triggers on `messages` (migration
# 0020): the statistics sum these rows instead of counting a million messages. `day` counts days since
# 1970-01-01 UTC. A row whose count fell to 0 stays. Without a rowid on SQLite: the key is the row.
room_days = Table(
    "room_days",
    metadata,
    Column("channel_id", BigInteger, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("day", Integer, nullable=False),
    Column("messages", Integer, nullable=False),
    PrimaryKeyConstraint("channel_id", "day", name="pk_room_days"),
    sqlite_with_rowid=False,
)

# The account tallies of the statistics count these instead of reading every account: activity of the
# present accounts (a range of last_seen_at), and the few banned and deleted ones.
Index("ix_users_present_last_seen_at", users.c.last_seen_at,
      sqlite_where=users.c.deleted_at.is_(None), postgresql_where=users.c.deleted_at.is_(None))
Index("ix_users_banned", users.c.id,
      sqlite_where=users.c.banned_at.is_not(None), postgresql_where=users.c.banned_at.is_not(None))
Index("ix_users_deleted", users.c.id,
      sqlite_where=users.c.deleted_at.is_not(None), postgresql_where=users.c.deleted_at.is_not(None))
