"""`meadhall backup DEST` / `meadhall restore SRC` (docs/operations.md): a backup of
the test instance restored into a fresh one serves the same users, messages and files; a tampered or
newer backup, a non-empty target and a wrong key are refused; a database stamped by a newer Meadhall
stops `migrate` and `serve` with one line."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from meadhall.app import create_app
from meadhall.config import Settings
from meadhall.db.migrate import shipped_revisions
from meadhall.runtime import Runtime
from tests.support.files import attached, fetch
from tests.support.isolation import clean_env, fresh_postgres
from tests.support.processes import MEADHALL, free_port, serve, stop

API = "/api/v1"
NEWER = "9999_from_the_future"
KEY = "restored-instance-key-0123456789-abcdefghij"


@pytest.fixture
def backend(backend: str) -> str:
    if backend == "postgres" and shutil.which("pg_dump") is None:
        pytest.skip("pg_dump is not installed")
    return backend


@asynccontextmanager
async def fresh_target(settings: Settings, tmp_path: Path, **extra: str) -> AsyncIterator[dict[str, str]]:
    """The environment of an empty instance of the same kind as the one under test."""
    env = {"DATA_DIR": str(tmp_path / f"restored-{uuid.uuid4().hex[:6]}"), "DATABASE_URL": "", "REDIS_URL": "",
           **extra}
    if settings.database_url.startswith("sqlite"):
        yield env
        return
    database = fresh_postgres()  # runs its own event loop: entered and left on a worker thread
    url = await asyncio.to_thread(database.__enter__)
    try:
        yield {**env, "DATABASE_URL": url}
    finally:
        await asyncio.to_thread(database.__exit__, None, None, None)


@asynccontextmanager
async def served(env: dict[str, str]) -> AsyncIterator[httpx.AsyncClient]:
    """The restored instance as an app (start-up migrates, as `serve` would)."""
    values: dict[str, Any] = {k: v for k, v in env.items() if v}
    rt = Runtime(Settings(**values))
    await rt.start()
    try:
        app = create_app(rt.settings, rt)
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield client
    finally:
        await rt.close()


async def instance_with_data(client: Any, accounts: Any) -> dict[str, Any]:
    alice = await accounts.register("alice", display_name="Alice of the Hall")
    r = await client.post(f"{API}/guilds", json={"name": "Backed-up Hall"}, headers=alice.headers)
    assert r.status_code == 201, r.text
    room = r.json()["guild"]["system_channel_id"]
    stored = await attached(client, alice, room, b"the saga, in full")
    r = await client.post(f"{API}/channels/{room}/messages", headers=alice.headers,
                          json={"content": "skål, Мёд", "attachment_ids": [stored["id"]]})
    assert r.status_code == 201, r.text
    return {"alice": alice, "room": room, "file": stored, "message": r.json()["message"]}


def corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


async def test_backup_then_restore_into_a_fresh_instance(client, accounts, settings, cli, tmp_path):
    data = await instance_with_data(client, accounts)
    dest = tmp_path / "backup"

    made = await cli("backup", str(dest))
    assert made.exit_code == 0, made.stderr
    out = made.json
    assert out["path"] == str(dest) and out["files"] == 1
    assert out["schema_revision"] == shipped_revisions()[-1] and out["secret_key_included"] is False
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["schema_revision"] == shipped_revisions()[-1]
    assert manifest["database"] == out["database"]
    assert manifest["meadhall_version"] == out["meadhall_version"]
    assert not (dest / "secret.key").exists() and "secret.key" not in manifest["files"]
    stored_name = f"files/{int(data['file']['id']) % 256:02x}/{data['file']['id']}"
    assert set(manifest["files"]) == {stored_name, "database/chat.db" if out["database"] == "sqlite"
                                      else "database/meadhall.pgdump"}
    assert all(len(entry["sha256"]) == 64 for entry in manifest["files"].values())

    # The backup holds no key: the fresh instance gets the original one from escrow (SECRET_KEY).
    async with fresh_target(settings, tmp_path, SECRET_KEY=settings.SECRET_KEY) as env:
        restored = await cli("restore", str(dest), env=env)
        assert restored.exit_code == 0, restored.stderr
        assert restored.json["secret_key"] == "matches" and restored.json["files"] == 1
        async with served(env) as again:
            me = await again.get(f"{API}/users/@me", headers=data["alice"].headers)
            assert me.status_code == 200, me.text
            assert me.json()["user"]["email"] == "alice@example.com"  # decrypted with the same key
            assert me.json()["user"]["display_name"] == "Alice of the Hall"
            page = await again.get(f"{API}/channels/{data['room']}/messages", headers=data["alice"].headers)
            assert page.status_code == 200, page.text
            messages = page.json() if isinstance(page.json(), list) else page.json()["messages"]
            assert [m["id"] for m in messages if m["content"] == "skål, Мёд"] == [data["message"]["id"]]
            content = await fetch(again, data["alice"], data["file"]["id"])
            assert content.status_code == 200 and content.content == b"the saga, in full"

        # Restoring again over the now non-empty instance needs --force.
        again_refused = await cli("restore", str(dest), env=env)
        assert again_refused.exit_code == 1 and again_refused.stdout == ""
        assert again_refused.error["code"] == "backup.target_not_empty"
        forced = await cli("restore", "--force", str(dest), env=env)
        assert forced.exit_code == 0, forced.stderr


async def test_backup_with_the_key_restores_it(client, accounts, settings, cli, tmp_path):
    data = await instance_with_data(client, accounts)
    dest = tmp_path / "backup"
    made = await cli("backup", "--include-secret-key", str(dest))
    assert made.exit_code == 0, made.stderr
    assert made.json["secret_key_included"] is True
    assert (dest / "secret.key").read_bytes() == settings.SECRET_KEY.encode()
    async with fresh_target(settings, tmp_path, SECRET_KEY="") as env:
        restored = await cli("restore", str(dest), env=env)
        assert restored.exit_code == 0, restored.stderr
        assert restored.json["secret_key"] == "restored"
        key_file = Path(env["DATA_DIR"]) / "secret.key"
        assert key_file.read_bytes() == settings.SECRET_KEY.encode()
        assert key_file.stat().st_mode & 0o077 == 0
        async with served(env) as again:
            me = await again.get(f"{API}/users/@me", headers=data["alice"].headers)
            assert me.status_code == 200 and me.json()["user"]["email"] == "alice@example.com"


async def test_restore_refuses_a_wrong_or_missing_key(client, accounts, settings, cli, tmp_path):
    await instance_with_data(client, accounts)
    dest = tmp_path / "backup"
    assert (await cli("backup", str(dest))).exit_code == 0
    async with fresh_target(settings, tmp_path, SECRET_KEY=KEY) as env:
        wrong = await cli("restore", str(dest), env=env)
        assert wrong.exit_code == 1 and wrong.error["code"] == "backup.secret_key_mismatch"
    async with fresh_target(settings, tmp_path, SECRET_KEY="") as env:
        missing = await cli("restore", str(dest), env=env)
        assert missing.exit_code == 1 and missing.error["code"] == "backup.secret_key_missing"
        assert not (Path(env["DATA_DIR"]) / "files").exists()


@pytest.mark.parametrize("tamper", ["file_content", "database", "added_file", "removed_file", "manifest_sum"])
async def test_a_tampered_backup_is_refused(client, accounts, settings, cli, tmp_path, tamper):
    data = await instance_with_data(client, accounts)
    dest = tmp_path / "backup"
    assert (await cli("backup", str(dest))).exit_code == 0
    stored = dest / "files" / f"{int(data['file']['id']) % 256:02x}" / data["file"]["id"]
    if tamper == "file_content":
        corrupt(stored)
    elif tamper == "database":
        corrupt(next((dest / "database").iterdir()))
    elif tamper == "added_file":
        (dest / "files" / "00").mkdir(exist_ok=True)
        (dest / "files" / "00" / "256").write_bytes(b"planted")
    elif tamper == "removed_file":
        stored.unlink()
    else:
        manifest = json.loads((dest / "manifest.json").read_text())
        name = next(n for n in manifest["files"] if n.startswith("files/"))
        manifest["files"][name]["sha256"] = "0" * 64
        (dest / "manifest.json").write_text(json.dumps(manifest))
    async with fresh_target(settings, tmp_path, SECRET_KEY=settings.SECRET_KEY) as env:
        refused = await cli("restore", str(dest), env=env)
        assert refused.exit_code == 1 and refused.stdout == ""
        assert refused.error["code"] == "backup.checksum_mismatch", refused.stderr
        assert not (Path(env["DATA_DIR"]) / "chat.db").exists()  # nothing was written


async def test_a_backup_of_a_newer_schema_is_refused(client, accounts, settings, cli, tmp_path):
    await instance_with_data(client, accounts)
    dest = tmp_path / "backup"
    assert (await cli("backup", str(dest))).exit_code == 0
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["schema_revision"] = NEWER
    (dest / "manifest.json").write_text(json.dumps(manifest))
    async with fresh_target(settings, tmp_path, SECRET_KEY=settings.SECRET_KEY) as env:
        refused = await cli("restore", str(dest), env=env)
        assert refused.exit_code == 1
        assert refused.error["code"] == "schema.too_new"
        assert NEWER in refused.error["message"]


async def test_backup_refuses_a_non_empty_destination(client, accounts, cli, tmp_path):
    await instance_with_data(client, accounts)
    dest = tmp_path / "backup"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    refused = await cli("backup", str(dest))
    assert refused.exit_code == 1 and refused.error["code"] == "backup.target_not_empty"
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]


async def test_restore_of_something_else_is_refused(cli, tmp_path):
    (tmp_path / "junk").mkdir()
    refused = await cli("restore", str(tmp_path / "junk"), env={"DATA_DIR": str(tmp_path / "fresh")})
    assert refused.exit_code == 1 and refused.error["code"] == "backup.invalid"


# ---- a database written by a newer Meadhall --------------------------------------------------------


def stamp_newer_sqlite(data_dir: Path) -> None:
    con = sqlite3.connect(data_dir / "chat.db")
    with con:
        con.execute("UPDATE alembic_version SET version_num = ?", (NEWER,))
    con.close()


def test_migrate_and_serve_refuse_a_newer_schema(tmp_path: Path) -> None:
    import subprocess

    data_dir = tmp_path / "data"
    env = clean_env(DATA_DIR=str(data_dir))
    first = subprocess.run([str(MEADHALL), "migrate"], env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    stamp_newer_sqlite(data_dir)

    again = subprocess.run([str(MEADHALL), "migrate"], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and again.stdout == ""
    lines = again.stderr.strip().splitlines()
    assert len(lines) == 1, again.stderr
    error = json.loads(lines[0])["error"]
    assert error["code"] == "schema.too_new" and NEWER in error["message"]

    node = serve(tmp_path / "node", env, port=free_port())
    try:
        code = node.proc.wait(timeout=30)
    finally:
        stop(node)
    assert code == 1
    lines = node.stderr().strip().splitlines()
    assert len(lines) == 1, node.stderr()
    assert json.loads(lines[0])["error"]["code"] == "schema.too_new"
    assert "Traceback" not in node.stdout()
    con = sqlite3.connect(data_dir / "chat.db")
    assert con.execute("SELECT version_num FROM alembic_version").fetchall() == [(NEWER,)]  # untouched
    con.close()
