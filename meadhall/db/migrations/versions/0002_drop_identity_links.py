"""Drop the external identity-provider link table (SPEC rule 3: sign-in is password + TOTP and
passkeys only). Databases that never had the table are left as they are.

Revision ID: 0002_drop_identity_links
Revises: 0001_initial
"""

from alembic import op

revision = "0002_drop_identity_links"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DROP TABLE IF EXISTS user_identity_links")


def downgrade() -> None:
    # The links are gone for good; there is nothing to restore.
    pass
