"""The instance-administration data set (bench/workloads_admin.py): 100,000 users, 300 guilds with 600 rooms,
1,000,000 messages over the last 60 days, 250,000 audit entries, sessions and files, written straight into
the database with bulk inserts (the API would take days), then kept under a cache directory keyed by the
seed version and the newest migration, so that later runs start in seconds.

- SQLite: `<cache>/admin-<key>/data/chat.db`, copied into the bench server's DATA_DIR for each run.
- PostgreSQL: a database `meadhall_bench_admin_<key>` beside the one given with `--database-url` (same server
  and credentials), reused in place (the admin workloads only read).

Emails are encrypted with keys derived from SEED_SECRET (the server must run with it: the workloads restart
it so), and every user shares one argon2 hash of SEED_PASSWORD. The administrator is made with the CLI
(`create-user --admin --sessions`: a CLI-issued session carries administrator power), and its session is
kept beside the seed. The rows themselves are drawn in bench/seed_admin_rows.py.

Run alone to build (or check) the cache: `python -m bench.seed_admin [--database-url postgresql://...]`.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from bench.harness import meadhall_command, run_cli
from bench.seed_admin_rows import (
    BATCH,
    Plan,
    audit_rows,
    file_rows,
    guild_rows,
    message_rows,
    session_rows,
    user_rows,
)

SEED_VERSION = 2  # 2: audit entries linked into their hash chains
SEED_SECRET = "meadhall-bench-admin-seed-secret-key-0001"  # >= 32 bytes; also the server's SECRET_KEY
SEED_PASSWORD = "bench-admin-seed-password"  # noqa: S105 - a bench data set, not a credential

ADMIN_USERNAME = "benchadmin"
ADMIN_EMAIL = "benchadmin@bench.example"


def progress(message: str) -> None:
    print(f"bench: seed: {message}", file=sys.stderr, flush=True)


def migration_head() -> str:
    import meadhall.db.migrations.versions as versions

    names = sorted(p.stem for p in Path(versions.__file__).parent.glob("[0-9]*.py"))
    return names[-1].split("_", 1)[0] if names else "0"


def seed_key() -> str:
    return f"v{SEED_VERSION}m{migration_head()}"


def cache_root() -> Path:
    base = os.environ.get("MEADHALL_BENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "meadhall-bench")
    return Path(base)


# ---- writing -----------------------------------------------------------------------------------------


async def _insert(engine: Any, table: Any, batches: Any, what: str, per_transaction: int = BATCH) -> None:
    from sqlalchemy import insert

    started, n = time.perf_counter(), 0
    for batch in batches:
        for i in range(0, len(batch), per_transaction):
            async with engine.begin() as conn:
                await conn.execute(insert(table), batch[i:i + per_transaction])
        n += len(batch)
        if n % 100_000 < len(batch):
            progress(f"{what}: {n} rows ({time.perf_counter() - started:.0f} s)")
    progress(f"{what}: {n} rows in {time.perf_counter() - started:.1f} s")


def _chunks(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for i in range(0, len(rows), BATCH):
        yield rows[i:i + BATCH]


async def write_seed(database_url: str, admin_id: int) -> None:
    """Bulk-insert the data set into a migrated database that holds the administrator already."""
    from argon2 import PasswordHasher
    from sqlalchemy import text

    from meadhall.config import Settings
    from meadhall.core.crypto import Keys
    from meadhall.db.engine import create_engine
    from meadhall.db.schema import (
        channels,
        files,
        guilds,
        members,
        messages,
        roles,
        sessions,
        users,
    )

    settings = Settings(SECRET_KEY=SEED_SECRET, DATABASE_URL=database_url)
    keys = Keys.derive(settings.secret_key())
    password_hash = PasswordHasher(time_cost=2, memory_cost=65_536, parallelism=1).hash(SEED_PASSWORD)
    plan = Plan(int(time.time() * 1000), admin_id)
    engine = create_engine(settings.database_url)  # the driver the server uses (asyncpg, the inline SQLite one)
    try:
        # Fewer accounts per transaction: the triggers on `users` update one counter row per string of one or
        # two characters in the names (user_name_grams); 5,000 accounts in one transaction would give each
        # such row thousands of versions, which PostgreSQL walks on every further update (minutes instead of
        # seconds). A server writes one account per transaction.
        await _insert(engine, users, user_rows(plan, keys, password_hash), "users", per_transaction=250)
        guild_list, role_list, room_list, member_list = guild_rows(plan)
        await _insert(engine, guilds, _chunks(guild_list), "guilds")
        await _insert(engine, roles, _chunks(role_list), "roles")
        await _insert(engine, channels, _chunks(room_list), "rooms")
        await _insert(engine, members, _chunks(member_list), "members")
        message_ids: list[int] = []
        message_rooms: dict[int, tuple[int, int]] = {}

        def remembered() -> Iterator[list[dict[str, Any]]]:
            for batch in message_rows(plan):
                for row in batch[::50]:  # every 50th message may carry a file
                    message_ids.append(row["id"])
                    message_rooms[row["id"]] = (row["channel_id"], row["guild_id"])
                yield batch

        await _insert(engine, messages, remembered(), "messages")
        await _write_audit(engine, plan)
        await _insert(engine, sessions, _chunks(session_rows(plan)), "sessions")
        await _insert(engine, files, _chunks(file_rows(plan, message_ids, message_rooms)), "files")
        async with engine.begin() as conn:
            # Plan with the statistics of the loaded tables, as a server that has run a while would
            # (PostgreSQL is vacuumed as well, outside a transaction: ensure_postgres).
            await conn.execute(text("ANALYZE"))
    finally:
        await engine.dispose()


async def _write_audit(engine: Any, plan: Plan) -> None:
    """The audit entries, linked into their hash chains (docs/audit.md) when the schema has them: the
    entries already there (the CLI's grant to the administrator) are taken out and written again in id
    order with the seeded ones, every hash computed as record() would, then one head per chain, so that
    `meadhall audit-verify` accepts the seed."""
    from sqlalchemy import select

    from meadhall.db.schema import audit_log

    if "hash" not in audit_log.c:
        await _insert(engine, audit_log, audit_rows(plan), "audit entries")
        return
    from meadhall.audit.chain import chain_key, entry_hash
    from meadhall.db.schema.audit import audit_chain_heads

    async with engine.begin() as conn:
        existing = [{k: v for k, v in r.items() if k not in ("prev_hash", "hash")}
                    for r in (await conn.execute(select(audit_log).order_by(audit_log.c.id))).mappings()]
        await conn.execute(audit_log.delete())
        await conn.execute(audit_chain_heads.delete())
    heads: dict[str, tuple[int, str | None]] = {}

    def linked() -> Iterator[list[dict[str, Any]]]:
        rows = heapq.merge((row for batch in audit_rows(plan) for row in batch), existing, key=lambda r: r["id"])
        batch: list[dict[str, Any]] = []
        for row in rows:
            key = chain_key(row["guild_id"])
            prev = heads.get(key, (0, None))[1]
            digest = entry_hash(row, prev)
            batch.append({**row, "prev_hash": prev, "hash": digest})
            heads[key] = (row["id"], digest)
            if len(batch) == BATCH:
                yield batch
                batch = []
        if batch:
            yield batch

    await _insert(engine, audit_log, linked(), "audit entries (chained)")
    await _insert(engine, audit_chain_heads, _chunks([
        {"chain_key": key, "last_id": last_id, "last_hash": last_hash}
        for key, (last_id, last_hash) in heads.items()]), "audit chain heads")


async def _cli(env: dict[str, str], *args: str) -> str:
    rc, out, err = await run_cli(env, *args, limit=600)
    if rc != 0:
        raise RuntimeError(f"meadhall {args[0]} failed (exit {rc}): {(err or out)[-400:]}")
    return out


async def _make_admin(env: dict[str, str], data_dir: Path, sessions_path: Path) -> dict[str, Any]:
    await _cli(env, "migrate", "--data-dir", str(data_dir))
    await _cli(env, "create-user", "--username", ADMIN_USERNAME, "--email", ADMIN_EMAIL, "--password",
               SEED_PASSWORD, "--admin", "--sessions", str(sessions_path), "--data-dir", str(data_dir))
    admin = json.loads((await asyncio.to_thread(sessions_path.read_text)).splitlines()[0])
    return {"id": str(admin["id"]), "username": admin["username"], "token": admin["token"]}


def _seed_env(data_dir: Path, database_url: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("DATABASE_URL", "REDIS_URL", "PUBLIC_URL"):
        env.pop(name, None)
    env.update(DATA_DIR=str(data_dir), SECRET_KEY=SEED_SECRET, LOG_LEVEL="warning")
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


async def ensure_sqlite() -> tuple[Path, dict[str, Any]]:
    """(the cached chat.db, the administrator {id, username, token}); built when missing."""
    root = cache_root() / f"admin-{seed_key()}-sqlite"
    done = root / "seed.json"
    if done.exists():
        return root / "data" / "chat.db", json.loads(done.read_text())["admin"]
    shutil.rmtree(root, ignore_errors=True)
    data_dir = root / "data"
    data_dir.mkdir(parents=True)
    started = time.perf_counter()
    progress(f"building the SQLite data set under {root} (a few minutes, once)")
    admin = await _make_admin(_seed_env(data_dir, None), data_dir, root / "admin-session.jsonl")
    await write_seed(f"sqlite:///{data_dir / 'chat.db'}", int(admin["id"]))
    done.write_text(json.dumps({"admin": admin, "seconds": round(time.perf_counter() - started, 1)}))
    progress(f"SQLite data set ready in {time.perf_counter() - started:.0f} s")
    return data_dir / "chat.db", admin


def postgres_seed_url(base_url: str) -> str:
    return make_url(base_url).set(database=f"meadhall_bench_admin_{seed_key()}").render_as_string(
        hide_password=False)


async def _pg_admin_conn(url: str, database: str | None = "postgres") -> Any:
    import asyncpg

    parsed = make_url(url).set(drivername="postgresql", database=database)
    return await asyncpg.connect(parsed.render_as_string(hide_password=False))


async def ensure_postgres(base_url: str) -> tuple[str, dict[str, Any]]:
    """(the seeded database's URL, the administrator); the database is made beside `base_url`'s."""
    url = postgres_seed_url(base_url)
    name = make_url(url).database
    u = make_url(base_url)
    root = cache_root() / f"admin-{seed_key()}-pg-{u.host or 'local'}-{u.port or 5432}"
    done = root / "seed.json"
    conn = await _pg_admin_conn(base_url)
    try:
        exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
        if exists and done.exists():
            return url, json.loads(done.read_text())["admin"]
        if exists:  # a seed interrupted earlier: start again
            await conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    started = time.perf_counter()
    progress(f"building the PostgreSQL data set in database {name} (a few minutes, once)")
    data_dir = root / "data"
    data_dir.mkdir()
    admin = await _make_admin(_seed_env(data_dir, url), data_dir, root / "admin-session.jsonl")
    await write_seed(url, int(admin["id"]))
    # Autovacuum would get there within minutes on a live server: the visibility map set (index-only scans
    # without heap fetches) and the statistics current. Measuring before it would measure a state no
    # server stays in.
    seeded = await _pg_admin_conn(url, database=name)
    try:
        await seeded.execute("VACUUM (ANALYZE)")
    finally:
        await seeded.close()
    done.write_text(json.dumps({"admin": admin, "seconds": round(time.perf_counter() - started, 1)}))
    progress(f"PostgreSQL data set ready in {time.perf_counter() - started:.0f} s")
    return url, admin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.seed_admin", description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="PostgreSQL server to seed beside (default: the SQLite cache)")
    args = parser.parse_args(argv)
    assert meadhall_command()
    if args.database_url:
        url, admin = asyncio.run(ensure_postgres(args.database_url))
        print(json.dumps({"database_url": make_url(url).render_as_string(hide_password=True), "admin_id": admin["id"]}))
    else:
        path, admin = asyncio.run(ensure_sqlite())
        print(json.dumps({"sqlite": str(path), "bytes": path.stat().st_size, "admin_id": admin["id"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
