"""The SQL every numbered migration emits, upgrading an empty database one revision at a time, as text
that tests/db/test_migration_sql.py compares with the snapshots committed in tests/db/snapshots/. A shipped
revision must keep creating exactly what it created (docs/architecture.md, "Migrations"): a change anywhere
in what it runs (its file, a frozen module it imports, SQLAlchemy's rendering of its operations) shows up
here.

Regenerate the snapshots after adding a migration, and read the diff: only the new revision may appear in it.

    TEST_DATABASE_URL=postgresql://... python -m tests.support.migration_sql

(without TEST_DATABASE_URL only the SQLite snapshot is written)."""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from alembic import command
from sqlalchemy import Connection, event

from meadhall.db.engine import create_engine
from meadhall.db.migrate import alembic_config, shipped_revisions
from tests.support.isolation import TEST_DATABASE_URL
from tests.support.migrations import BACKENDS, empty_database

SNAPSHOTS = Path(__file__).resolve().parent.parent / "db" / "snapshots"
SNAPSHOT_NAMES = {"sqlite": "migrations.sqlite.sql", "postgres": "migrations.postgresql.sql"}

# Reads are left out: the catalogue queries behind an inspection (0010 looks for existing columns) and
# Alembic's look at its version table are the SQLAlchemy release's text, not the revision's, and change
# nothing. A PRAGMA that sets something has "=" and is kept.
_READ = re.compile(r"^\s*(SELECT\b|PRAGMA\b[^=]*$)", re.IGNORECASE)


# SQLite's batch mode rebuilds a table as `_alembic_tmp_<name>` and then recreates its indexes in the order of
# a Python set, which changes from run to run: that run of CREATE INDEX statements is sorted. Nothing else
# varies between two runs on empty databases (no generated name, no time).
_BATCH_RENAME = re.compile(r"^ALTER TABLE _alembic_tmp_\w+ RENAME TO ")
_CREATE_INDEX = re.compile(r"^CREATE (UNIQUE )?INDEX ")


def _normalise(statements: list[str]) -> list[str]:
    result: list[str] = []
    i = 0
    while i < len(statements):
        result.append(statements[i])
        i += 1
        if _BATCH_RENAME.match(result[-1]):
            end = i
            while end < len(statements) and _CREATE_INDEX.match(statements[end]):
                end += 1
            result.extend(sorted(statements[i:end]))
            i = end
    return result


def _render(statement: str, parameters: Any) -> str | None:
    """The statement as a snapshot line, None for a read."""
    if _READ.match(statement):
        return None
    lines = [line.rstrip() for line in statement.strip().splitlines()]
    rendered = "\n".join(lines) + ";"
    if parameters:
        rendered += f"\n-- parameters: {parameters!r}"
    return rendered



def _upgrade(sync_conn: Connection, revision: str) -> None:
    command.upgrade(alembic_config(sync_conn), revision)

async def render_migration_sql(url: str) -> str:
    """Every statement executed while upgrading the empty database at `url` to each revision in turn, under
    a `-- revision <id>` line per revision."""
    engine = create_engine(url)
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        rendered = _render(statement, parameters)
        if rendered is not None:
            statements.append(rendered)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    sections: list[str] = []
    try:
        for revision in shipped_revisions():
            async with engine.connect() as conn:
                statements.clear()
                await conn.run_sync(_upgrade, revision)
                await conn.commit()
                sections.append(f"-- revision {revision}\n" + "\n".join(_normalise(statements)) + "\n")
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
        await engine.dispose()
    return "\n".join(sections)


def snapshot_of(backend: str, directory: Path) -> str:
    """The migration SQL of `backend` ("sqlite" or "postgres"), run on a fresh database."""
    with empty_database(backend, directory) as url:
        return asyncio.run(render_migration_sql(url))


def write_snapshots() -> list[Path]:
    written = []
    for backend in BACKENDS:
        with tempfile.TemporaryDirectory() as directory:
            path = SNAPSHOTS / SNAPSHOT_NAMES[backend]
            path.parent.mkdir(exist_ok=True)
            path.write_text(snapshot_of(backend, Path(directory)))
            written.append(path)
    return written


if __name__ == "__main__":
    for path in write_snapshots():
        print(f"wrote {path}")
    if not TEST_DATABASE_URL:
        print("TEST_DATABASE_URL is not set: the PostgreSQL snapshot was not written", file=sys.stderr)
