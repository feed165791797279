"""Custom emojis, sounds, the cosmetics gallery and personal styles (docs/customisation.md).

Revision ID: 0012_customisation
Revises: 0011_social
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_customisation"
down_revision = "0011_social"
branch_labels = None
depends_on = None


def _guild_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(["guild_id"], ["guilds.id"], name=f"fk_{table}_guild_id_guilds", ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "emojis",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("name_norm", sa.String(length=32), nullable=False),
        sa.Column("file_id", sa.BigInteger(), nullable=False),
        sa.Column("animated", sa.Boolean(), nullable=False),
        sa.Column("creator_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _guild_fk("emojis"),
        sa.PrimaryKeyConstraint("id", name="pk_emojis"),
        sa.UniqueConstraint("guild_id", "name_norm", name="uq_emojis_guild_id_name_norm"),
        if_not_exists=True,
    )
    op.create_table(
        "sounds",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("name_norm", sa.String(length=32), nullable=False),
        sa.Column("emoji", sa.String(length=64), nullable=True),
        sa.Column("palette_event", sa.String(length=16), nullable=True),
        sa.Column("file_id", sa.BigInteger(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("creator_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _guild_fk("sounds"),
        sa.PrimaryKeyConstraint("id", name="pk_sounds"),
        sa.UniqueConstraint("guild_id", "kind", "name_norm", name="uq_sounds_guild_id_kind_name_norm"),
        sa.UniqueConstraint("guild_id", "palette_event", name="uq_sounds_guild_id_palette_event"),
        if_not_exists=True,
    )
    op.create_table(
        "cosmetics",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("file_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _guild_fk("cosmetics"),
        sa.PrimaryKeyConstraint("id", name="pk_cosmetics"),
        if_not_exists=True,
    )
    op.create_index("ix_cosmetics_guild_id", "cosmetics", ["guild_id"], unique=False, if_not_exists=True)
    op.create_table(
        "user_styles",
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("scope_key", sa.BigInteger(), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=True),
        sa.Column("frame_id", sa.BigInteger(), nullable=True),
        sa.Column("icon_id", sa.BigInteger(), nullable=True),
        sa.Column("color", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_user_styles_user_id_users", ondelete="CASCADE"),
        _guild_fk("user_styles"),
        sa.PrimaryKeyConstraint("user_id", "scope_key", name="pk_user_styles"),
        if_not_exists=True,
    )
    op.create_index("ix_user_styles_guild_id", "user_styles", ["guild_id"], unique=False, if_not_exists=True)


def downgrade() -> None:
    pass
