"""Passkeys (WebAuthn credentials) of accounts (OpenAPI: listPasskeys; docs/passkeys.md)."""

from sqlalchemy import JSON, BigInteger, Boolean, Column, ForeignKey, Index, LargeBinary, String, Table

from meadhall.db.schema.base import id_column, metadata, ts_column

passkeys = Table(
    "passkeys",
    metadata,
    id_column(),
    Column("user_id", BigInteger, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    # base64url of the raw credential id (at most 1023 bytes by WebAuthn Level 3).
    Column("credential_id", String(1400), nullable=False, unique=True),
    Column("public_key", LargeBinary, nullable=False),
    Column("sign_count", BigInteger, nullable=False),
    Column("transports", JSON, nullable=False),
    Column("backed_up", Boolean, nullable=False),
    Column("name", String(64), nullable=False),
    # The WebAuthn user handle (base64url): one per account, the same on all of its passkeys, random so
    # that it says nothing about the account.
    Column("user_handle", String(128), nullable=False),
    ts_column("created_at"),
    ts_column("last_used_at", nullable=True),
    Index("ix_passkeys_user_id", "user_id"),
)

__all__ = ["passkeys"]
