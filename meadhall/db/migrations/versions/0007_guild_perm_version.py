"""`guilds.perm_version`, kept current by triggers, so permission data can be cached safely.

Revision ID: 0007_guild_perm_version
Revises: 0006_message_search
"""

import sqlalchemy as sa
from alembic import op

from meadhall.db.migrations.frozen import perm_versions_0007

revision = "0007_guild_perm_version"
down_revision = "0006_message_search"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("guilds")}
    if "perm_version" not in columns:
        with op.batch_alter_table("guilds") as batch:
            batch.add_column(sa.Column("perm_version", sa.BigInteger(), nullable=False, server_default="0"))
    perm_versions_0007.create_perm_version_triggers(op)


def downgrade() -> None:
    pass
