"""Stored files: uploads, attachments and images (docs/files.md).

Revision ID: 0008_files
Revises: 0007_guild_perm_version
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_files"
down_revision = "0007_guild_perm_version"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "files",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("uploader_id", sa.BigInteger(), nullable=True),
        sa.Column("original_name", sa.String(length=255), nullable=False),
        sa.Column("content_type", sa.String(length=255), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.Column("guild_id", sa.BigInteger(), nullable=True),
        sa.Column("channel_id", sa.BigInteger(), nullable=True),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("owner", sa.String(length=32), nullable=True),
        sa.Column("owner_id", sa.BigInteger(), nullable=True),
        sa.Column("owner_key", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_files"),
        if_not_exists=True,
    )
    op.create_index("ix_files_message_id", "files", ["message_id"], unique=False, if_not_exists=True)
    op.create_index("ix_files_guild_id", "files", ["guild_id"], unique=False, if_not_exists=True)
    op.create_index("ix_files_channel_id", "files", ["channel_id"], unique=False, if_not_exists=True)
    op.create_index("ix_files_owner_created_at", "files", ["owner", "created_at"], unique=False,
                    if_not_exists=True)


def downgrade() -> None:
    op.drop_table("files")
