"""Servers: guilds, rooms, roles, overrides, members, invitations, bans, personal templates.

Revision ID: 0004_guilds
Revises: 0003_accounts
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_guilds"
down_revision = "0003_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "guilds",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("name_norm", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("icon_file_id", sa.BigInteger(), nullable=True),
        sa.Column("banner_file_id", sa.BigInteger(), nullable=True),
        sa.Column("splash_file_id", sa.BigInteger(), nullable=True),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("member_count", sa.Integer(), nullable=False),
        sa.Column("system_channel_id", sa.BigInteger(), nullable=True),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("public_invite_code", sa.String(length=16), nullable=True),
        sa.Column("is_main", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], name=("fk_guilds_owner_id_users")),
        sa.PrimaryKeyConstraint("id", name=("pk_guilds")),
        if_not_exists=True,
    )
    op.create_index("ix_guilds_owner_id", "guilds", ["owner_id"], unique=False, if_not_exists=True)
    op.create_table(
        "channels",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=True),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=True),
        sa.Column("topic", sa.Text(), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.BigInteger(), nullable=True),
        sa.Column("slowmode_seconds", sa.Integer(), nullable=False),
        sa.Column("user_limit", sa.Integer(), nullable=True),
        sa.Column("background_file_id", sa.BigInteger(), nullable=True),
        sa.Column("icon_file_id", sa.BigInteger(), nullable=True),
        sa.Column("dm_owner_id", sa.BigInteger(), nullable=True),
        sa.Column("last_message_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["guild_id"], ["guilds.id"], name=("fk_channels_guild_id_guilds"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=("pk_channels")),
        if_not_exists=True,
    )
    op.create_index("ix_channels_guild_id", "channels", ["guild_id"], unique=False, if_not_exists=True)
    op.create_table(
        "guild_bans",
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("author_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["guild_id"], ["guilds.id"], name=("fk_guild_bans_guild_id_guilds"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("guild_id", "user_id", name="pk_guild_bans"),
        if_not_exists=True,
    )
    op.create_table(
        "members",
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("nick", sa.String(length=64), nullable=True),
        sa.Column("nick_norm", sa.String(length=128), nullable=True),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("timeout_until", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["guild_id"], ["guilds.id"], name=("fk_members_guild_id_guilds"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=("fk_members_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("guild_id", "user_id", name="pk_members"),
        if_not_exists=True,
    )
    op.create_index("ix_members_user_id", "members", ["user_id"], unique=False, if_not_exists=True)
    op.create_table(
        "roles",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("color", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("permissions", sa.BigInteger(), nullable=False),
        sa.Column("hoist", sa.Boolean(), nullable=False),
        sa.Column("frame_id", sa.BigInteger(), nullable=True),
        sa.Column("icon_id", sa.BigInteger(), nullable=True),
        sa.Column("is_default", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["guild_id"], ["guilds.id"], name=("fk_roles_guild_id_guilds"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=("pk_roles")),
        if_not_exists=True,
    )
    op.create_index(
        "ix_roles_guild_id_position", "roles", ["guild_id", "position"], unique=False, if_not_exists=True
    )
    op.create_table(
        "templates",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("source_guild_id", sa.BigInteger(), nullable=True),
        sa.Column("structure", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=("fk_templates_owner_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["source_guild_id"],
            ["guilds.id"],
            name=("fk_templates_source_guild_id_guilds"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=("pk_templates")),
        if_not_exists=True,
    )
    op.create_index("ix_templates_owner_id", "templates", ["owner_id"], unique=False, if_not_exists=True)
    op.create_table(
        "invites",
        sa.Column("code", sa.String(length=16), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("inviter_id", sa.BigInteger(), nullable=True),
        sa.Column("max_age_seconds", sa.Integer(), nullable=False),
        sa.Column("max_uses", sa.Integer(), nullable=False),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("is_public", sa.Boolean(), nullable=False),
        sa.Column("background_file_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"], ["channels.id"], name=("fk_invites_channel_id_channels"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["guild_id"], ["guilds.id"], name=("fk_invites_guild_id_guilds"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("code", name=("pk_invites")),
        if_not_exists=True,
    )
    op.create_index("ix_invites_guild_id", "invites", ["guild_id"], unique=False, if_not_exists=True)
    op.create_table(
        "member_roles",
        sa.Column("guild_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("role_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["guild_id", "user_id"],
            ["members.guild_id", "members.user_id"],
            name="fk_member_roles_guild_id_members",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["role_id"], ["roles.id"], name=("fk_member_roles_role_id_roles"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("guild_id", "user_id", "role_id", name="pk_member_roles"),
        if_not_exists=True,
    )
    op.create_index("ix_member_roles_role_id", "member_roles", ["role_id"], unique=False, if_not_exists=True)
    op.create_table(
        "permission_overrides",
        sa.Column("channel_id", sa.BigInteger(), nullable=False),
        sa.Column("target_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("allow", sa.BigInteger(), nullable=False),
        sa.Column("deny", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=("fk_permission_overrides_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("channel_id", "target_id", name="pk_permission_overrides"),
        if_not_exists=True,
    )


def downgrade() -> None:
    op.drop_table("permission_overrides")
    op.drop_table("member_roles")
    op.drop_table("invites")
    op.drop_table("templates")
    op.drop_table("roles")
    op.drop_table("members")
    op.drop_table("guild_bans")
    op.drop_table("channels")
    op.drop_table("guilds")
