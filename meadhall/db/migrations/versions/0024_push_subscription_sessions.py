"""`push_subscriptions.session_id`: a subscription belongs to the session that made it and is deleted with it,
whatever ends the session (docs/push.md, "Subscriptions end with their session"). Subscriptions stored before
had no session; they are deleted (browsers subscribe again at their next sign-in).

Revision ID: 0024_push_subscription_sessions
Revises: 0023_user_style_count
"""

import sqlalchemy as sa
from alembic import op

revision = "0024_push_subscription_sessions"
down_revision = "0023_user_style_count"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("push_subscriptions")}
    if "session_id" not in columns:
        op.execute("DELETE FROM push_subscriptions")
        with op.batch_alter_table("push_subscriptions") as batch:
            batch.add_column(sa.Column("session_id", sa.BigInteger(), nullable=False))
            batch.create_foreign_key("fk_push_subscriptions_session_id_sessions", "sessions", ["session_id"],
                                     ["id"], ondelete="CASCADE")
    op.create_index("ix_push_subscriptions_session_id", "push_subscriptions", ["session_id"], unique=False,
                    if_not_exists=True)


def downgrade() -> None:
    op.drop_index("ix_push_subscriptions_session_id", "push_subscriptions", if_exists=True)
    with op.batch_alter_table("push_subscriptions") as batch:
        batch.drop_constraint("fk_push_subscriptions_session_id_sessions", type_="foreignkey")
        batch.drop_column("session_id")
