"""Passkeys: WebAuthn credentials of accounts (docs/passkeys.md). Ceremonies live in the shared store.

Revision ID: 0016_passkeys
Revises: 0015_webhooks
"""

import sqlalchemy as sa
from alembic import op

revision = "0016_passkeys"
down_revision = "0015_webhooks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "passkeys",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("credential_id", sa.String(length=1400), nullable=False),
        sa.Column("public_key", sa.LargeBinary(), nullable=False),
        sa.Column("sign_count", sa.BigInteger(), nullable=False),
        sa.Column("transports", sa.JSON(), nullable=False),
        sa.Column("backed_up", sa.Boolean(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("user_handle", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_passkeys_user_id_users", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_passkeys"),
        sa.UniqueConstraint("credential_id", name="uq_passkeys_credential_id"),
        if_not_exists=True,
    )
    op.create_index("ix_passkeys_user_id", "passkeys", ["user_id"], unique=False, if_not_exists=True)


def downgrade() -> None:
    pass
