"""The raw SQL of shipped migrations, frozen: one module per revision that runs statements written per
database (triggers, trigger functions, search tables and indexes), named after the objects and the revision.

A shipped revision must create on a fresh install exactly what it created when it shipped, so what it runs
never lives in code that keeps changing: these modules import nothing of Meadhall but this one, and are never
edited. tests/db/test_migrations.py pins the digest of each file here as of the migrations themselves, and
tests/db/test_migration_sql.py the SQL every revision emits. A changed trigger is a new revision with a new
module here (start from a copy of the last one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def run_for_database(op: Any, sqlite: Sequence[str], postgres: Sequence[str]) -> None:
    """Run the statements written for the migration's database (`op` is alembic.op), in order."""
    for statement in sqlite if op.get_bind().dialect.name == "sqlite" else postgres:
        op.execute(statement)
