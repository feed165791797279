"""Moving communities in (docs/migrating.md): `users.imported` marks an imported author (an account that
cannot sign in, holding the history of a source's user), and `import_links` remembers, per guild, which
local row each source id became, so a later export imported `--into` the same guild adds only what is new
and keeps each author's account.

Revision ID: 0031_imports
Revises: 0030_push_outbox
"""

import sqlalchemy as sa
from alembic import op

revision = "0031_imports"
down_revision = "0030_push_outbox"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN on both databases: a batch copy of `users` on SQLite would break the triggers that
    # name it.
    op.add_column("users", sa.Column("imported", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "import_links",
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("source_id", sa.String(length=64), nullable=False),
        sa.Column("local_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["guild_id"], ["guilds.id"], name="fk_import_links_guild_id_guilds",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("guild_id", "kind", "source_id", name="pk_import_links"),
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_table("import_links")
    op.drop_column("users", "imported")
