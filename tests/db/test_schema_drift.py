"""The Core tables (db/schema) and the shipped migrations describe the same layout."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from meadhall.db import dialect
from meadhall.db.schema import metadata


def _described_by_schema(name, type_, parent_names):  # type: ignore[no-untyped-def]
    # The message search objects are raw SQL of migrations (db/migrations/frozen/) and differ per database
    # (an FTS5 table with its shadow tables on SQLite, a GIN trigram index on PostgreSQL): db/schema does not
    # describe them.
    return not dialect.is_search_object(type_, name)


async def test_migrated_database_matches_schema_module(rt):
    def diff(sync_conn):  # type: ignore[no-untyped-def]
        ctx = MigrationContext.configure(sync_conn, opts={"compare_type": True, "include_name": _described_by_schema})
        return compare_metadata(ctx, metadata)

    async with rt.engine.connect() as conn:
        changes = await conn.run_sync(diff)
    assert changes == []
