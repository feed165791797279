"""Stored files (the OpenAPI document): one row per upload, content under DATA_DIR/files named by the id.

`owner` says what holds the file (null while an upload is unbound): `message` for attachments (with
`message_id` and `position`), or an image slot such as `user.avatar`, with `owner_id` naming the holder
(`owner_key` for an invitation, whose key is its code). There are no foreign keys: deleting a holder must also remove the content on disk, which the files domain
does explicitly, and its maintenance job finds what a cascade left behind (meadhall/files/cleanup.py).
"""

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, String, Table

from meadhall.db.schema.base import id_column, metadata, ts_column

files = Table(
    "files",
    metadata,
    id_column(),
    Column("purpose", String(16), nullable=False),
    Column("uploader_id", BigInteger, nullable=True),
    Column("original_name", String(255), nullable=False),
    Column("content_type", String(255), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("meta", JSON, nullable=False),
    Column("guild_id", BigInteger, nullable=True),
    Column("channel_id", BigInteger, nullable=True),
    Column("message_id", BigInteger, nullable=True),
    Column("position", Integer, nullable=True),
    Column("owner", String(32), nullable=True),
    Column("owner_id", BigInteger, nullable=True),
    Column("owner_key", String(32), nullable=True),
    ts_column("created_at"),
    Index("ix_files_message_id", "message_id"),
    Index("ix_files_guild_id", "guild_id"),
    Index("ix_files_channel_id", "channel_id"),
    Index("ix_files_owner_created_at", "owner", "created_at"),
)

__all__ = ["files"]
