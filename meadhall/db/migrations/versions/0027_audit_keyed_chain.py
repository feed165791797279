"""The keyed audit chain (docs/audit.md): each chain head records after which entry its chain is keyed
(`keyed_after`: entries up to it keep their plain SHA-256 hashes, later ones carry HMAC-SHA256 under a key
derived from SECRET_KEY) and its own HMAC (`mac`). Both stay NULL here: the key is not the migration's to
hold, so the first start after the upgrade sets them on every head (meadhall/audit/keying.py).

Revision ID: 0027_audit_keyed_chain
Revises: 0026_mentions
"""

import sqlalchemy as sa
from alembic import op

revision = "0027_audit_keyed_chain"
down_revision = "0026_mentions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("audit_chain_heads")}
    with op.batch_alter_table("audit_chain_heads") as batch:
        if "keyed_after" not in columns:
            batch.add_column(sa.Column("keyed_after", sa.BigInteger(), nullable=True))
        if "mac" not in columns:
            batch.add_column(sa.Column("mac", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audit_chain_heads") as batch:
        batch.drop_column("mac")
        batch.drop_column("keyed_after")
