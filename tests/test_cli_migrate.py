"""`meadhall migrate` (docs/operations.md) as a subprocess of the console script: one JSON object on stdout
listing the revisions it applied, exit 0; nothing applied the second time; errors as the envelope on
stderr with exit 1."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meadhall.db.migrate import shipped_revisions
from tests.support.isolation import TEST_DATABASE_URL, clean_env, fresh_postgres

MEADHALL = Path(sys.executable).parent / "meadhall"
BACKENDS = ["sqlite"] + (["postgres"] if TEST_DATABASE_URL else [])


def meadhall(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    assert MEADHALL.exists(), f"console script not installed at {MEADHALL}"
    return subprocess.run([str(MEADHALL), *args], env=clean_env(**env), capture_output=True, text=True,
                          timeout=60)


def one_json_object(stdout: str) -> dict[str, Any]:
    lines = stdout.splitlines()
    assert len(lines) == 1, f"expected exactly one line on stdout, got {stdout!r}"
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


@pytest.fixture(params=BACKENDS)
def database_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    if request.param == "sqlite":
        yield {}
        return
    with fresh_postgres() as url:
        yield {"DATABASE_URL": url}


def test_migrate_applies_everything_once(tmp_path: Path, database_env: dict[str, str]) -> None:
    data_dir = tmp_path / "data"

    first = meadhall("migrate", "--data-dir", str(data_dir), **database_env)
    assert first.returncode == 0, first.stderr
    assert one_json_object(first.stdout) == {"applied": shipped_revisions()}
    # At the default level no library speaks: no Alembic "Running upgrade", no pool notes.
    assert first.stderr == "", first.stderr
    if not database_env:
        assert (data_dir / "chat.db").is_file()

    # Again, now through the DATA_DIR variable instead of the flag: the same database, nothing pending.
    second = meadhall("migrate", DATA_DIR=str(data_dir), **database_env)
    assert second.returncode == 0, second.stderr
    assert one_json_object(second.stdout) == {"applied": []}


def test_data_dir_flag_overrides_the_variable(tmp_path: Path) -> None:
    result = meadhall("migrate", "--data-dir", str(tmp_path / "flag"), DATA_DIR=str(tmp_path / "env"))
    assert result.returncode == 0, result.stderr
    assert one_json_object(result.stdout)["applied"] == shipped_revisions()
    assert (tmp_path / "flag" / "chat.db").is_file()
    assert not (tmp_path / "env").exists()


def test_invalid_configuration_is_an_error_envelope_on_stderr(tmp_path: Path) -> None:
    result = meadhall("migrate", "--data-dir", str(tmp_path / "data"), NODE_ID="5000")
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    error = json.loads(lines[0])["error"]
    assert set(error) >= {"code", "message"}
    assert "NODE_ID" in error["message"]
    assert not (tmp_path / "data" / "chat.db").exists()



def test_library_lines_appear_at_debug_only(tmp_path: Path) -> None:
    """Alembic's lines are held back by the level, not lost: LOG_LEVEL=debug shows them, as JSON on
    stderr, while stdout stays the one answer."""
    result = meadhall("migrate", "--data-dir", str(tmp_path / "data"), LOG_LEVEL="debug")
    assert result.returncode == 0, result.stderr
    assert one_json_object(result.stdout)["applied"] == shipped_revisions()
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    assert any(line.get("logger", "").startswith("alembic") and line["event"].startswith("Running upgrade")
               for line in lines), result.stderr
