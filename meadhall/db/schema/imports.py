"""Imports (docs/migrating.md): which local row each id of an imported source became, per guild."""

from sqlalchemy import BigInteger, Column, ForeignKey, String, Table

from meadhall.db.schema.base import metadata

# `kind` names what the source id was (`message`, `user`, `room`, `category`, `role`, `emoji`); `source_id` is
# the source's own id as text (Discord snowflakes, a Meadhall archive's ids). Rows go with their guild.
import_links = Table(
    "import_links",
    metadata,
    Column("guild_id", BigInteger, ForeignKey("guilds.id", ondelete="CASCADE"), primary_key=True),
    Column("kind", String(16), primary_key=True),
    Column("source_id", String(64), primary_key=True),
    Column("local_id", BigInteger, nullable=False),
)
