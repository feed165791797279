"""Backup and restore of one instance: `meadhall backup DEST` and `meadhall restore SRC`
(docs/operations.md).

A backup is a directory:

    manifest.json              format, Meadhall version, schema revision, database kind, the size and
                               sha256 of every other file, the secret key's fingerprint
    database/chat.db           SQLite: a consistent copy through SQLite's online backup API
    database/meadhall.pgdump   PostgreSQL: `pg_dump -Fc`
    files/<xx>/<id>            the stored file contents (DATA_DIR/files, without upload spools)
    secret.key                 only when asked: the key belongs in escrow, apart from the backups

The database is copied before the files: a file row always finds its content (content written after the
copy is an orphan in the backup, which the orphan-file job removes after a restore).

The dump is the one place outside db/dialect/ that tells the databases apart: each engine has its own
dump tool, chosen by the URL scheme, not by a connection.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import shutil
import sqlite3
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import literal, select
from sqlalchemy.engine import make_url

from meadhall import __version__
from meadhall.config import Settings, ensure_data_dir
from meadhall.db import dialect
from meadhall.db.engine import create_engine
from meadhall.db.migrate import check_known, schema_revision
from meadhall.db.schema import metadata

FORMAT = 1
MANIFEST = "manifest.json"
SQLITE_COPY = "database/chat.db"
PG_DUMP = "database/meadhall.pgdump"
KEY_FILE = "secret.key"
SPOOL_DIR = "tmp"  # uploads being received (meadhall/filestore.py): not content yet
CHUNK = 1024 * 1024
_KEY_CHECK = b"meadhall backup: secret key check"


class BackupError(Exception):
    """A refused backup or restore; `code` is the CLI error code, the message one line."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def key_fingerprint(key: bytes) -> str:
    """Tells whether two keys are the same without revealing either (a keyed hash of a constant)."""
    return hmac.new(key, _KEY_CHECK, hashlib.sha256).hexdigest()[:32]


def _kind(settings: Settings) -> str:
    return "sqlite" if settings.database_url.startswith("sqlite") else "postgresql"


def _sqlite_path(settings: Settings) -> Path:
    database = make_url(settings.database_url).database
    assert database, "SQLite URL without a file"
    return Path(database)


def _pg_command(settings: Settings) -> tuple[str, dict[str, str]]:
    """A libpq URI for pg_dump / pg_restore; the password goes through the environment, not argv."""
    url = make_url(settings.database_url)
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    uri = url.set(drivername="postgresql", password=None).render_as_string(hide_password=False)
    return uri, env


def _run_tool(args: list[str], env: dict[str, str]) -> None:
    tool = args[0]
    if shutil.which(tool) is None:
        raise BackupError("backup.tool_missing", f"{tool} is not installed (PostgreSQL client tools are needed)")
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise BackupError("backup.tool_failed", f"{tool} failed: {last}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_files(source: Path, target: Path) -> None:
    """Copy the stored contents (not the upload spools) from `source` to `target`."""
    if not source.is_dir():
        return
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if relative.parts[0] == SPOOL_DIR or not path.is_file():
            continue
        (target / relative).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copyfile(path, target / relative)


def _listing(root: Path) -> dict[str, dict[str, Any]]:
    """Every file under `root` but the manifest: relative POSIX path -> size and sha256."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.relative_to(root).as_posix() != MANIFEST:
            found[path.relative_to(root).as_posix()] = {"size": path.stat().st_size, "sha256": _sha256(path)}
    return found


# ---- backup ------------------------------------------------------------------------------------


def _dump_database(settings: Settings, dest: Path) -> None:
    if _kind(settings) == "sqlite":
        target = dest / SQLITE_COPY
        target.parent.mkdir(mode=0o700)
        source = sqlite3.connect(f"{_sqlite_path(settings).resolve().as_uri()}?mode=ro", uri=True)
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)  # a consistent snapshot while the service keeps writing
            # One self-contained file: no write-ahead log beside it, ever (readers of a WAL file create one).
            copy.execute("PRAGMA journal_mode=DELETE")
        finally:
            copy.close()
            source.close()
    else:
        target = dest / PG_DUMP
        target.parent.mkdir(mode=0o700)
        uri, env = _pg_command(settings)
        _run_tool(["pg_dump", "--format=custom", "--no-owner", f"--file={target}", f"--dbname={uri}"], env)


def _prepare_destination(dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BackupError("backup.target_not_empty", f"{dest} exists and is not an empty directory")
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)


def _write_backup(settings: Settings, dest: Path, revision: str | None, include_secret_key: bool) -> dict[str, Any]:
    _dump_database(settings, dest)
    _copy_files(settings.DATA_DIR / "files", dest / "files")
    key = settings.secret_key()
    if include_secret_key:
        (dest / KEY_FILE).write_bytes(key)
    listing = _listing(dest)
    manifest = {
        "format": FORMAT,
        "meadhall_version": __version__,
        "schema_revision": revision,
        "database": _kind(settings),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "secret_key_included": include_secret_key,
        "secret_key_fingerprint": key_fingerprint(key),
        "files": listing,
    }
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    contents = [name for name in listing if name.startswith("files/")]
    return {
        "path": str(dest), "database": manifest["database"], "schema_revision": revision,
        "meadhall_version": __version__, "files": len(contents),
        "bytes": sum(entry["size"] for entry in listing.values()), "secret_key_included": include_secret_key,
    }


async def backup(settings: Settings, dest: Path, *, include_secret_key: bool = False) -> dict[str, Any]:
    """Write a backup of the configured instance into `dest` (absent or an empty directory)."""
    engine = create_engine(settings.database_url)
    try:
        revision = await schema_revision(engine)
    finally:
        await engine.dispose()
    if revision is None:
        raise BackupError("backup.nothing_to_back_up", "the database has never been migrated: nothing to back up")
    await asyncio.to_thread(_prepare_destination, dest)
    return await asyncio.to_thread(_write_backup, settings, dest, revision, include_secret_key)


# ---- restore -----------------------------------------------------------------------------------


def _read_manifest(src: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((src / MANIFEST).read_text())
    except FileNotFoundError:
        raise BackupError("backup.invalid", f"{src} has no {MANIFEST}: not a Meadhall backup") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise BackupError("backup.invalid", f"{src / MANIFEST} is not valid JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
        raise BackupError("backup.invalid", f"{src / MANIFEST} is not a format-{FORMAT} Meadhall manifest")
    return manifest


def _verify(src: Path, manifest: dict[str, Any]) -> None:
    """Every listed file is there with its size and sha256, and nothing else was added."""
    expected: dict[str, Any] = manifest["files"]
    present = {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()} - {MANIFEST}
    added = sorted(present - set(expected))
    if added:
        raise BackupError("backup.checksum_mismatch", f"{added[0]} is in the backup but not in its manifest")
    for name, entry in sorted(expected.items()):
        path = src / name
        if name not in present:
            raise BackupError("backup.checksum_mismatch", f"{name} is missing from the backup")
        if path.stat().st_size != entry.get("size") or _sha256(path) != entry.get("sha256"):
            raise BackupError("backup.checksum_mismatch", f"{name} does not match its sha256 in the manifest")


def _check_key(settings: Settings, src: Path, manifest: dict[str, Any]) -> str:
    """The key the restored data was encrypted with must be the one the service will use."""
    wanted = manifest.get("secret_key_fingerprint")
    key_file = settings.DATA_DIR / KEY_FILE
    if manifest.get("secret_key_included"):
        if settings.SECRET_KEY and key_fingerprint(settings.SECRET_KEY.encode()) != wanted:
            raise BackupError("backup.secret_key_mismatch",
                              "SECRET_KEY is set and differs from the key in the backup: unset it or set the backup's key")
        return "restored"
    configured = settings.SECRET_KEY.encode() if settings.SECRET_KEY else (
        key_file.read_bytes().strip() if key_file.is_file() else None)
    if configured is None:
        raise BackupError("backup.secret_key_missing",
                          "the backup holds no secret key: set SECRET_KEY (or put secret.key into DATA_DIR) to the "
                          "backed-up instance's key from escrow, or back up with --include-secret-key")
    if key_fingerprint(configured) != wanted:
        raise BackupError("backup.secret_key_mismatch",
                          "the configured secret key is not the backed-up instance's key: e-mail addresses and "
                          "TOTP secrets could not be read; set SECRET_KEY to the key from escrow")
    return "matches"


async def _target_has_data(settings: Settings) -> bool:
    files = settings.DATA_DIR / "files"
    if files.is_dir() and any(p.is_file() for p in files.rglob("*") if p.relative_to(files).parts[0] != SPOOL_DIR):
        return True
    if _kind(settings) == "sqlite" and not _sqlite_path(settings).exists():
        return False
    engine = create_engine(settings.database_url)
    try:
        async with engine.connect() as conn:
            existing = set(await dialect.list_tables(conn))
            for table in metadata.sorted_tables:
                if table.name in existing and (await conn.execute(select(literal(1)).select_from(table).limit(1))).first():
                    return True
    finally:
        await engine.dispose()
    return False


def _load_database(settings: Settings, src: Path) -> None:
    if _kind(settings) == "sqlite":
        target = _sqlite_path(settings)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # immutable: reading the backup writes nothing beside it (its checksums stay true).
        source = sqlite3.connect(f"{(src / SQLITE_COPY).resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        into = sqlite3.connect(target)
        try:
            source.backup(into)  # replaces every page, also what an old write-ahead log held
        finally:
            into.close()
            source.close()
    else:
        uri, env = _pg_command(settings)
        _run_tool(["pg_restore", "--clean", "--if-exists", "--no-owner", "--single-transaction",
                   f"--dbname={uri}", str(src / PG_DUMP)], env)


def _load_files(settings: Settings, src: Path) -> None:
    """Swap in the backup's files: copied beside the old folder first, so a failed copy leaves it intact."""
    files = settings.DATA_DIR / "files"
    incoming = settings.DATA_DIR / "files.restoring"
    shutil.rmtree(incoming, ignore_errors=True)
    incoming.mkdir(mode=0o700)
    _copy_files(src / "files", incoming)
    if files.exists():
        old = settings.DATA_DIR / "files.replaced"
        shutil.rmtree(old, ignore_errors=True)
        files.rename(old)
        incoming.rename(files)
        shutil.rmtree(old)
    else:
        incoming.rename(files)


def _write_key(settings: Settings, src: Path) -> None:
    path = settings.DATA_DIR / KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write((src / KEY_FILE).read_bytes())


async def restore(settings: Settings, src: Path, *, force: bool = False) -> dict[str, Any]:
    """Restore the backup in `src` into the configured database and DATA_DIR. The service must be stopped."""
    manifest = await asyncio.to_thread(_read_manifest, src)
    await asyncio.to_thread(_verify, src, manifest)
    revision = manifest.get("schema_revision")
    if not isinstance(revision, str):
        raise BackupError("backup.invalid", f"{src / MANIFEST} names no schema revision")
    check_known(revision)  # a backup of a newer Meadhall: restoring it here would serve a layout it cannot read
    if manifest.get("database") != _kind(settings):
        raise BackupError("backup.wrong_database", f"the backup is of a {manifest.get('database')} database and "
                          f"the configured one is {_kind(settings)}")
    ensure_data_dir(settings.DATA_DIR)
    key_state = _check_key(settings, src, manifest)
    if not force and await _target_has_data(settings):
        raise BackupError("backup.target_not_empty", "the configured database or DATA_DIR/files holds data: "
                          "restore into a fresh instance, or pass --force to replace it")
    await asyncio.to_thread(_load_database, settings, src)
    await asyncio.to_thread(_load_files, settings, src)
    if key_state == "restored":
        await asyncio.to_thread(_write_key, settings, src)
    contents = [name for name in manifest["files"] if name.startswith("files/")]
    return {"restored_from": str(src), "database": manifest["database"], "schema_revision": revision,
            "meadhall_version": manifest.get("meadhall_version"), "files": len(contents), "secret_key": key_state}
