"""Mentions kept where counting them is an index range (docs/mentions.md): `user_mentions`, a row
per (user, room, message) a message names, and `everyone_mentions`, a row per `@everyone` message, both gone with
their message by cascade. An acknowledgement counts them after the read mark instead of matching every message of
the room. Filled from the messages there are, in id order and in batches, by the rules this file holds (a shipped
migration keeps what it runs): no system message, a private message names only its recipient, an `@everyone`
message is one row for its room, the author never, and only users that exist.

Revision ID: 0026_mentions
Revises: 0025_cli_outbox
"""

from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0026_mentions"
down_revision = "0025_cli_outbox"
branch_labels = None
depends_on = None

BATCH = 2_000

_messages = sa.table(
    "messages",
    sa.column("id", sa.BigInteger()), sa.column("channel_id", sa.BigInteger()),
    sa.column("author_id", sa.BigInteger()), sa.column("kind", sa.String()),
    sa.column("recipient_id", sa.BigInteger()), sa.column("mentions", sa.JSON()),
    sa.column("mention_everyone", sa.Boolean()),
)
_users = sa.table("users", sa.column("id", sa.BigInteger()))
_user_mentions = sa.table("user_mentions", sa.column("user_id", sa.BigInteger()),
                          sa.column("channel_id", sa.BigInteger()), sa.column("message_id", sa.BigInteger()))
_everyone_mentions = sa.table("everyone_mentions", sa.column("channel_id", sa.BigInteger()),
                              sa.column("message_id", sa.BigInteger()), sa.column("author_id", sa.BigInteger()))


def upgrade() -> None:
    existing = set(sa.inspect(op.get_bind()).get_table_names())
    op.create_table(
        "user_mentions",
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_user_mentions_user_id_users", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["message_id"], ["messages.id"], name="fk_user_mentions_message_id_messages",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "channel_id", "message_id", name="pk_user_mentions"),
        sqlite_with_rowid=False,
        if_not_exists=True,
    )
    op.create_index("ix_user_mentions_message_id", "user_mentions", ["message_id"], if_not_exists=True)
    op.create_table(
        "everyone_mentions",
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("author_id", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["message_id"], ["messages.id"], name="fk_everyone_mentions_message_id_messages",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("channel_id", "message_id", name="pk_everyone_mentions"),
        sqlite_with_rowid=False,
        if_not_exists=True,
    )
    op.create_index("ix_everyone_mentions_message_id", "everyone_mentions", ["message_id"], if_not_exists=True)
    # Tables that were there already were filled when they were made: filling them again would repeat rows.
    if not {"user_mentions", "everyone_mentions"} & existing:
        _fill(op.get_bind())


def _fill(bind: Any) -> None:
    for rows in _mentioning_messages(bind):
        pairs: list[tuple[int, int, int]] = []
        everyone: list[dict[str, Any]] = []
        for row in rows:
            if row.kind == "private":
                users = [row.recipient_id] if row.recipient_id is not None else []
            elif row.mention_everyone:
                everyone.append({"channel_id": row.channel_id, "message_id": row.id, "author_id": row.author_id})
                continue
            else:
                users = [int(m) for m in row.mentions or ()]
            pairs += [(u, row.channel_id, row.id) for u in dict.fromkeys(users) if u != row.author_id]
        known = _existing_users(bind, {u for u, _, _ in pairs})
        if named := [{"user_id": u, "channel_id": c, "message_id": m} for u, c, m in pairs if u in known]:
            bind.execute(sa.insert(_user_mentions), named)
        if everyone:
            bind.execute(sa.insert(_everyone_mentions), everyone)


def _mentioning_messages(bind: Any) -> Iterator[list[Any]]:
    """Messages that may mention someone, BATCH at a time by id (one pass over `messages`)."""
    may_mention = sa.and_(_messages.c.kind != "system", sa.or_(
        _messages.c.mention_everyone.is_(True), _messages.c.recipient_id.is_not(None),
        sa.cast(_messages.c.mentions, sa.Text()) != "[]"))
    after = 0
    while True:
        rows = bind.execute(sa.select(_messages).where(_messages.c.id > after, may_mention)
                            .order_by(_messages.c.id).limit(BATCH)).all()
        if not rows:
            return
        yield rows
        after = rows[-1].id


def _existing_users(bind: Any, ids: set[int]) -> set[int]:
    if not ids:
        return set()
    return set(bind.execute(sa.select(_users.c.id).where(_users.c.id.in_(sorted(ids)))).scalars())


def downgrade() -> None:
    op.drop_table("everyone_mentions", if_exists=True)
    op.drop_table("user_mentions", if_exists=True)
