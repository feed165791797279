"""SQLite and the file store on a full disk (docs/operations.md, "Outages"): a write answers 503
`service.unavailable` with a message naming the full disk, nothing stored is damaged (`PRAGMA
integrity_check`), no partial file is left under DATA_DIR, and the service writes again once space is back,
with no restart.

Two ways to fill the disk: SQLite's `PRAGMA max_page_count` (always runs), and a real small tmpfs holding
DATA_DIR (needs the right to mount, e.g. root; skipped cleanly otherwise)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from tests.support.files import attach
from tests.support.guilds import make_guild
from tests.support.messages import history

BIG = "x" * 3000  # a few of these fill a page or two


@pytest.fixture
def backend() -> str:
    return "sqlite"


def database_path(rt: Any) -> Path:
    return Path(rt.engine.url.database)


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def assert_disk_full(r: httpx.Response) -> None:
    assert r.status_code == 503, r.text
    error = r.json()["error"]
    assert error["code"] == "service.unavailable"
    assert "disk" in error["message"].lower() and "full" in error["message"].lower(), error
    assert r.headers["Retry-After"]


async def send(client: httpx.AsyncClient, who: Any, room: str, content: str, nonce: str) -> httpx.Response:
    return await client.post(f"/api/v1/channels/{room}/messages", headers=who.headers,
                             json={"content": content, "nonce": nonce})


async def fill_until_refused(client: httpx.AsyncClient, who: Any, room: str) -> tuple[list[str], httpx.Response]:
    """Send big messages until one is refused; the ids of those acknowledged, and the refusal."""
    acknowledged: list[str] = []
    for i in range(400):
        r = await send(client, who, room, f"{i} {BIG}", f"fill-{i}")
        if r.status_code != 201:
            return acknowledged, r
        acknowledged.append(r.json()["message"]["id"])
    raise AssertionError("the database never filled up")


async def test_sqlite_full_answers_503_keeps_the_database_whole_and_writes_again(
        client: httpx.AsyncClient, accounts: Any, rt: Any) -> None:
    alice = await accounts.register("alice")
    room = (await make_guild(client, alice))["system_channel_id"]
    limit = {"pages": 0}

    @event.listens_for(rt.engine.sync_engine, "connect")
    def _cap(dbapi_connection: Any, _record: Any) -> None:
        if limit["pages"]:
            dbapi_connection.execute(f"PRAGMA max_page_count={limit['pages']}")

    path = database_path(rt)
    with sqlite3.connect(path) as probe:
        limit["pages"] = probe.execute("PRAGMA page_count").fetchone()[0] + 8
    await rt.engine.dispose()  # new connections, capped

    acknowledged, refused = await fill_until_refused(client, alice, room)
    assert_disk_full(refused)
    assert acknowledged, "the cap left no room at all: the test proves nothing"
    # Reads go on while the disk is full.
    assert (await client.get("/api/v1/users/@me", headers=alice.headers)).status_code == 200
    assert integrity(path) == "ok"

    limit["pages"] = 0
    await rt.engine.dispose()  # space is back: connections without the cap
    r = await send(client, alice, room, "after the disk was freed", "after")
    assert r.status_code == 201, r.text
    stored = [m["id"] for m in (await history(client, alice, room, limit=100))["messages"]]
    assert all(stored.count(i) == 1 for i in acknowledged)
    assert integrity(path) == "ok"


# ---------------------------------------------------------------- a real full file system


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs at tmp_path/disk, unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, Any]:
    if "small_disk" not in request.fixturenames:
        return {}
    disk: Path = request.getfixturevalue("small_disk")
    template = request.getfixturevalue("sqlite_template")
    (disk / "data").mkdir()
    target = disk / "data" / "chat.db"
    target.write_bytes(template.read_bytes())
    return {"DATA_DIR": disk / "data", "DATABASE_URL": f"sqlite:///{target}"}


def ballast(disk: Path) -> Path:
    """Fill what is left of the disk with one file (removed to give the space back)."""
    path = disk / "ballast"
    with open(path, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    return path


def partial_files(root: Path) -> list[Path]:
    spools = root / "files" / "tmp"
    return sorted(spools.iterdir()) if spools.exists() else []


async def test_a_full_file_system_refuses_writes_and_uploads_then_recovers(
        small_disk: Path, client: httpx.AsyncClient, accounts: Any, rt: Any, settings: Any) -> None:
    alice = await accounts.register("alice")
    room = (await make_guild(client, alice))["system_channel_id"]
    sent = await send(client, alice, room, "before the disk filled", "before")
    assert sent.status_code == 201, sent.text
    stored_files = sorted(p for p in (settings.DATA_DIR / "files").rglob("*") if p.is_file())

    filler = ballast(small_disk)
    acknowledged, refused = await fill_until_refused(client, alice, room)
    assert_disk_full(refused)
    upload = await attach(client, alice, room, os.urandom(512 * 1024), "big.bin", "application/octet-stream")
    assert_disk_full(upload)
    assert partial_files(settings.DATA_DIR) == []
    assert sorted(p for p in (settings.DATA_DIR / "files").rglob("*") if p.is_file()) == stored_files
    assert (await client.get("/api/v1/users/@me", headers=alice.headers)).status_code == 200
    assert integrity(database_path(rt)) == "ok"

    filler.unlink()
    r = await send(client, alice, room, "after the disk was freed", "after")
    assert r.status_code == 201, r.text
    upload = await attach(client, alice, room, os.urandom(64 * 1024), "small.bin", "application/octet-stream")
    assert upload.status_code == 201, upload.text
    stored = [m["id"] for m in (await history(client, alice, room, limit=100))["messages"]]
    assert all(stored.count(i) == 1 for i in [sent.json()["message"]["id"], *acknowledged])
    assert integrity(database_path(rt)) == "ok"


def test_an_sqlite_io_error_answers_503_and_other_database_errors_stay_faults() -> None:
    """A write the file system refused with an I/O error (SQLITE_IOERR_WRITE, _FSYNC...: a failing disk, a file
    system gone read-only) stored nothing: 503, as for a full disk, not a 500. A mistake in a statement is not."""
    from sqlalchemy.exc import OperationalError

    from meadhall.api.errors import outage

    io_error = sqlite3.OperationalError("disk I/O error")
    io_error.sqlite_errorcode = 778  # SQLITE_IOERR_WRITE
    answer = outage(OperationalError("INSERT INTO messages ...", {}, io_error))
    assert answer is not None and answer.status == 503 and answer.code == "service.unavailable"

    mistake = sqlite3.OperationalError("no such table: nothing")
    mistake.sqlite_errorcode = 1  # SQLITE_ERROR
    assert outage(OperationalError("SELECT * FROM nothing", {}, mistake)) is None
