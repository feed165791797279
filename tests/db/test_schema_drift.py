"""The Core tables (db/schema) and the shipped migrations describe the same layout."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from meadhall.db.schema import metadata


async def test_migrated_database_matches_schema_module(rt):
    def diff(sync_conn):  # type: ignore[no-untyped-def]
        ctx = MigrationContext.configure(sync_conn, opts={"compare_type": True})
        return compare_metadata(ctx, metadata)

    async with rt.engine.connect() as conn:
        changes = await conn.run_sync(diff)
    assert changes == []
