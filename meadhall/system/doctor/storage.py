"""Class `storage`: DATA_DIR (exists or can be created, writable, not readable by others, free space), the
generated key file, the database (reachable, schema revision) and Redis (reachable when configured).
Every connection attempt is bounded by TIMEOUT seconds."""

from __future__ import annotations

import asyncio
import shutil
import stat
import tempfile
from pathlib import Path

from sqlalchemy.engine import make_url

from meadhall.config import Settings
from meadhall.db.engine import create_engine
from meadhall.db.migrate import schema_revision, shipped_revisions
from meadhall.system.doctor.config import NEW_KEY, key_weakness
from meadhall.system.doctor.findings import Finding, describe, error, ok, warning

KLASS = "storage"
TIMEOUT = 3.0
MiB = 1024 * 1024
FREE_WARNING = 1024 * MiB
FREE_ERROR = 100 * MiB


def _existing_ancestor(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _can_write(directory: Path) -> bool:
    """By trying, since permission bits say nothing for root or on a read-only mount."""
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-"):
            return True
    except OSError:
        return False


def check_data_dir(settings: Settings) -> list[Finding]:
    path = settings.DATA_DIR.resolve()
    if not path.exists():
        parent = _existing_ancestor(path)
        if parent.is_dir() and _can_write(parent):
            return [ok(KLASS, "data_dir", f"DATA_DIR {path} does not exist yet: the service creates it (mode 0700)")]
        return [error(KLASS, "data_dir", f"DATA_DIR {path} does not exist and cannot be created under {parent}",
                      f"create it for the service's user: install -d -m 0700 -o meadhall {path}, or set DATA_DIR "
                      "to a writable directory")]
    if not path.is_dir():
        return [error(KLASS, "data_dir", f"DATA_DIR {path} is not a directory",
                      "set DATA_DIR to a directory, e.g. DATA_DIR=/var/lib/meadhall")]
    found: list[Finding] = []
    if _can_write(path):
        found.append(ok(KLASS, "data_dir_writable", f"DATA_DIR {path} is writable by this user"))
    else:
        found.append(error(KLASS, "data_dir_writable", f"DATA_DIR {path} is not writable by this user",
                           f"run as the service's user, or: chown -R meadhall {path} && chmod 0700 {path}"))
    found.append(_mode(path))
    found.append(_free_space(path))
    return found


def _mode(path: Path) -> Finding:
    mode = stat.S_IMODE(path.stat().st_mode)
    fix = f"chmod 0700 {path} (it holds the database, the uploaded files and the key)"
    if mode & 0o007:
        return error(KLASS, "data_dir_mode", f"DATA_DIR {path} has mode {mode:04o}: other users can reach it", fix)
    if mode & 0o070:
        return warning(KLASS, "data_dir_mode", f"DATA_DIR {path} has mode {mode:04o}: its group can reach it", fix)
    return ok(KLASS, "data_dir_mode", f"DATA_DIR {path} has mode {mode:04o} (owner only)")


def _free_space(path: Path) -> Finding:
    free = shutil.disk_usage(path).free
    text = f"{free / MiB:.0f} MiB free under DATA_DIR {path}"
    fix = "free space on that file system or move DATA_DIR to a larger one (uploads and the database live there)"
    if free < FREE_ERROR:
        return error(KLASS, "free_space", text + f" (below {FREE_ERROR // MiB} MiB)", fix)
    if free < FREE_WARNING:
        return warning(KLASS, "free_space", text + f" (below {FREE_WARNING // MiB} MiB)", fix)
    return ok(KLASS, "free_space", text)


def check_key_file(settings: Settings) -> list[Finding]:
    """With SECRET_KEY unset the master key is DATA_DIR/secret.key (docs/operations.md, "Key escrow")."""
    if settings.SECRET_KEY:
        return []
    path = settings.DATA_DIR.resolve() / "secret.key"
    if not path.exists():
        return [ok(KLASS, "secret_key_file", f"{path} does not exist yet: the service generates it at first "
                   "start; escrow it then (docs/operations.md, \"Key escrow\")")]
    try:
        key = path.read_bytes().strip().decode()
    except (OSError, UnicodeDecodeError) as err:
        return [error(KLASS, "secret_key_file", f"the key file {path} cannot be read: {describe(err)}",
                      f"chown meadhall {path} && chmod 0600 {path}, or restore it from escrow")]
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        return [error(KLASS, "secret_key_file", f"the key file {path} has mode {mode:04o}: others can read the key",
                      f"chmod 0600 {path}")]
    weakness = key_weakness(key) if key else "it is empty"
    if weakness:
        return [error(KLASS, "secret_key_file", f"the key file {path} is weak: {weakness}",
                      f"if no data exists yet, replace its content with `{NEW_KEY}`; otherwise restore the key "
                      "from escrow")]
    return [ok(KLASS, "secret_key_file", f"the key file {path} is owner-only and strong")]


def _missing_sqlite_file(url_text: str) -> str | None:
    """The path of a SQLite database file that does not exist (connecting would create it)."""
    url = make_url(url_text)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return None if Path(url.database).exists() else url.database
    return None


async def check_database(settings: Settings) -> list[Finding]:
    shown = make_url(settings.database_url).render_as_string(hide_password=True)
    missing = _missing_sqlite_file(settings.database_url)
    if missing:
        return [ok(KLASS, "database", f"the SQLite database {missing} does not exist yet: the service creates "
                   "and migrates it at start")]
    engine = create_engine(settings.database_url)
    try:
        revision = await asyncio.wait_for(schema_revision(engine), TIMEOUT)
    except Exception as err:  # any failure to reach or read it is the finding
        reason = describe(err)
        return [error(KLASS, "database", f"the database {shown} cannot be reached: {reason}",
                      "start the database server, or correct DATABASE_URL "
                      "(postgresql://user:password@host:5432/name, or unset it for SQLite under DATA_DIR)")]
    finally:
        await engine.dispose()
    return [ok(KLASS, "database", f"the database {shown} answers"), _schema(revision)]


def _schema(revision: str | None) -> Finding:
    shipped = shipped_revisions()
    if revision == shipped[-1]:
        return ok(KLASS, "schema", f"the schema is at this version's head revision {revision}")
    if revision is None:
        return warning(KLASS, "schema", "the database was never migrated",
                       "nothing to do for a new instance: `meadhall serve` migrates at start (or run "
                       "`meadhall migrate`)")
    if revision in shipped:
        behind = len(shipped) - 1 - shipped.index(revision)
        return warning(KLASS, "schema", f"the schema is at {revision}, {behind} migration(s) behind {shipped[-1]}",
                       "back up first (`meadhall backup DEST`); `meadhall serve` migrates at start, or run "
                       "`meadhall migrate`")
    return error(KLASS, "schema", (
        f"the schema is at revision {revision}, which this version does not know (its newest is {shipped[-1]}): "
        "the database was written by a newer Meadhall and this one refuses to start on it"),
        "run the newer Meadhall version, or restore a backup taken with this one (`meadhall restore`)")


def _hide_password(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: shown as configured, it holds no parsable password
        return url


async def check_redis(settings: Settings) -> list[Finding]:
    if not settings.REDIS_URL:
        return [ok(KLASS, "redis", "REDIS_URL is unset: single-node mode (set it before adding a second node)")]
    from redis.asyncio import Redis

    shown = _hide_password(settings.REDIS_URL)
    try:
        client = Redis.from_url(settings.REDIS_URL, socket_connect_timeout=TIMEOUT, socket_timeout=TIMEOUT)
        try:
            await asyncio.wait_for(client.ping(), TIMEOUT)
        finally:
            await client.aclose()
    except Exception as err:  # any failure to reach it is the finding
        return [error(KLASS, "redis", f"Redis at {shown} cannot be reached: {describe(err)}",
                      "start Redis, or correct REDIS_URL (redis://host:6379/0), or unset it on a single node")]
    return [ok(KLASS, "redis", f"Redis at {shown} answers")]


async def check(settings: Settings) -> list[Finding]:
    return [*check_data_dir(settings), *check_key_file(settings), *await check_database(settings),
            *await check_redis(settings)]
