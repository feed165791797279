"""Every shipped revision emits exactly the SQL it emitted when it shipped, on SQLite and PostgreSQL, from
an empty database (docs/architecture.md, "Migrations"). The digests of test_migrations.py pin the files;
this pins what runs, whatever a revision imports. After adding a migration, regenerate the snapshots with
`python -m tests.support.migration_sql` and check that the diff holds the new revision only."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from tests.support.migration_sql import SNAPSHOT_NAMES, SNAPSHOTS, snapshot_of
from tests.support.migrations import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_revision_emits_its_snapshot(backend: str, tmp_path: Path) -> None:
    expected = (SNAPSHOTS / SNAPSHOT_NAMES[backend]).read_text()
    found = snapshot_of(backend, tmp_path)
    if found != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True),
                                            found.splitlines(keepends=True), "committed snapshot", "emitted now",
                                            n=2))
        pytest.fail(f"the migrations emit other SQL than tests/db/snapshots/{SNAPSHOT_NAMES[backend]}: a "
                    f"shipped revision must not change (add a migration instead)\n{diff}")
