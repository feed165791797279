"""Two nodes opening a fresh SQLite file at once: the switch to WAL waits for the other's lock instead of
failing the start with "database is locked" (SQLite does not run the busy handler for that switch)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from meadhall.db.engine import _enter_wal


def test_switch_to_wal_waits_for_a_reader_of_a_fresh_file(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN")
    holder.execute("SELECT * FROM t").fetchall()  # a shared lock, held until the commit below
    # No busy handler at all: what fails here without a retry fails at once.
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("PRAGMA journal_mode=WAL")
    released = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    released.start()
    started = time.monotonic()
    _enter_wal(other.cursor())
    assert time.monotonic() - started >= 0.2
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    released.join()
    holder.close()
    other.close()

