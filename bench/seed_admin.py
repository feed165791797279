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
kept beside the seed.

Run alone to build (or check) the cache: `python -m bench.seed_admin [--database-url postgresql://...]`.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import json
import os
import random
import secrets
import shutil
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from bench.harness import meadhall_command, run_cli

SEED_VERSION = 2  # 2: audit entries linked into their hash chains
SEED_SECRET = "meadhall-bench-admin-seed-secret-key-0001"  # >= 32 bytes; also the server's SECRET_KEY
SEED_PASSWORD = "bench-admin-seed-password"  # noqa: S105 - a bench data set, not a credential

USERS = 100_000
BANNED = 200
DELETED = 100
GUILDS = 300
ROOMS_PER_GUILD = 2
MEMBERS_PER_GUILD = (20, 600)
MESSAGES = 1_000_000
MESSAGE_DAYS = 60
AUDIT = 250_000
AUDIT_DAYS = 365
AUDIT_ACTORS = 2_000
SESSIONS = 20_000
FILES = 20_000
BATCH = 5_000

ADMIN_USERNAME = "benchadmin"
ADMIN_EMAIL = "benchadmin@bench.example"

FIRST = ("anna boris clara dmitri elena fyodor galina hans ingrid jonas karin leif marta nils olga pavel "
         "quentin rosa sven tatiana ulrich vera wolfgang xenia yuri zoe astrid bjorn dagny erik freya gunnar "
         "helga ivar jorunn knut liv magnus nora oskar ragnhild sigrid thor unni vidar").split()
LAST = ("smith ivanov muller larsen berg dahl eriksen fischer hansen jensen karlsson lund nilsen olsen "
        "petrov quist rasmussen sorensen thorsen vogel weber young zimmermann andersen bakken christensen "
        "dalby eklund falk gran holm isaksen johansen kvist lind moen nygaard ostby paulsen").split()
WORDS = ("the and mead hall feast king sword shield gold silver night morning mountain river forest village "
         "castle tower bridge ship storm thunder fire ice stone iron bread honey ale song story journey road "
         "market winter dragon hello world friend guest").split()
AUDIT_ACTIONS = (
    ("channel.update", "channel"), ("channel.create", "channel"), ("role.update", "role"),
    ("member.role_add", "user"), ("member.kick", "user"), ("member.ban", "user"), ("member.timeout", "user"),
    ("message.delete", "message"), ("message.pin", "message"), ("invite.create", "invite"),
    ("emoji.create", "emoji"), ("webhook.create", "webhook"), ("guild.update", "guild"),
    ("voice.mute", "user"), ("limits.bypass", "channel"),
)
INSTANCE_ACTIONS = (
    ("instance.user_ban", "user"), ("instance.user_unban", "user"), ("instance.user_logout_all", "user"),
    ("instance.user_session_revoke", "session"), ("instance.settings_update", "settings"),
)


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


def snowflake(ms: int, seq: int) -> int:
    """An id made at unix time `ms` (node 1022: never a live server's); seq keeps ids of one ms apart."""
    from meadhall.core.ids import EPOCH_MS

    return ((ms - EPOCH_MS) << 22) | (1022 << 12) | (seq & 0xFFF)


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


class Plan:
    """Every id and time of the data set, from one seeded RNG and one `now`."""

    def __init__(self, now_ms: int, admin_id: int) -> None:
        self.rng = random.Random(20261127)
        self.now_ms = now_ms
        self.admin_id = admin_id
        day = 86_400_000
        # Users joined over the last two years, in id order (ids follow created_at).
        span = 730 * day
        self.user_ms = sorted(now_ms - span + self.rng.randrange(span - day) for _ in range(USERS))
        self.user_ids = [snowflake(ms, i) for i, ms in enumerate(self.user_ms)]
        self.guild_ids = [snowflake(now_ms - 400 * day + i * 60_000, i) for i in range(GUILDS)]
        self.room_ids = [snowflake(now_ms - 400 * day + i * 60_000 + 1, i) for i in range(GUILDS * ROOMS_PER_GUILD)]
        self.members: dict[int, list[int]] = {}


# ---- rows ---------------------------------------------------------------------------------------------


def user_rows(plan: Plan, keys: Any, password_hash: str) -> Iterator[list[dict[str, Any]]]:
    from meadhall.core.crypto import blind_index, encrypt
    from meadhall.core.text import norm

    rng = plan.rng
    banned = set(rng.sample(range(USERS), BANNED))
    deleted = set(rng.sample(sorted(set(range(USERS)) - banned), DELETED))
    batch: list[dict[str, Any]] = []
    for i, (uid, ms) in enumerate(zip(plan.user_ids, plan.user_ms, strict=True)):
        first, last = FIRST[i % len(FIRST)], LAST[(i // len(FIRST)) % len(LAST)]
        username = f"{first}.{last}{i}"
        display = f"{first.title()} {last.title()} {i % 997}"
        email = f"{username}@mail{i % 50}.bench.example"
        seen = plan.now_ms - int(rng.expovariate(1 / (20 * 86_400_000)))
        row = {
            "id": uid, "username": username, "username_norm": norm(username),
            "email_enc": encrypt(keys.email_enc, email, aad=str(uid).encode()),
            "email_index": blind_index(keys.email_index, norm(email)), "password_hash": password_hash,
            "display_name": display, "display_name_norm": norm(display), "bio": "", "status": "online",
            "custom_status": None, "custom_status_emoji": None, "locale": "en", "timezone": "Europe/Moscow",
            "avatar_file_id": None, "totp_enabled": False, "totp_secret_enc": None, "totp_last_step": None,
            "totp_pending_enc": None, "totp_pending_expires_at": None, "onboarding_completed_at": at(ms),
            "is_instance_admin": False, "password_reset_required": False,
            "last_seen_at": at(max(ms, seen)), "created_at": at(ms),
            "banned_at": None, "ban_reason": None, "banned_by": None, "deleted_at": None,
        }
        if i in banned:
            row.update(banned_at=at(plan.now_ms - rng.randrange(1, 300) * 86_400_000),
                       ban_reason=f"spam wave {i % 7}", banned_by=plan.admin_id)
        if i in deleted:
            row.update(deleted_at=at(plan.now_ms - rng.randrange(1, 300) * 86_400_000))
        batch.append(row)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def guild_rows(plan: Plan) -> tuple[list[dict[str, Any]], ...]:
    from meadhall.core.text import norm
    from meadhall.guilds.structure import Structure

    rng = plan.rng
    default_permissions = Structure().default_permissions
    guilds: list[dict[str, Any]] = []
    roles: list[dict[str, Any]] = []
    rooms: list[dict[str, Any]] = []
    members: list[dict[str, Any]] = []
    for g, gid in enumerate(plan.guild_ids):
        created = at(plan.now_ms - 400 * 86_400_000 + g * 60_000)
        count = int(MEMBERS_PER_GUILD[0] + (MEMBERS_PER_GUILD[1] - MEMBERS_PER_GUILD[0]) * rng.random() ** 3)
        who = rng.sample(plan.user_ids, count)
        owner = who[0]
        plan.members[gid] = who
        name = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} Hall {g}"
        first_room = plan.room_ids[g * ROOMS_PER_GUILD]
        guilds.append({
            "id": gid, "name": name, "name_norm": norm(name), "description": None, "icon_file_id": None,
            "banner_file_id": None, "splash_file_id": None, "owner_id": owner, "member_count": count,
            "system_channel_id": first_room, "public": g % 5 == 0, "public_invite_code": None, "is_main": False,
            "created_at": created,
        })
        roles.append({"id": gid, "guild_id": gid, "name": "@everyone", "color": 0, "position": 0,
                      "permissions": default_permissions, "hoist": False, "frame_id": None, "icon_id": None,
                      "is_default": True, "created_at": created})
        for r in range(ROOMS_PER_GUILD):
            rooms.append({
                "id": plan.room_ids[g * ROOMS_PER_GUILD + r], "guild_id": gid, "type": "text",
                "name": ("general", "chatter")[r], "topic": None, "position": r, "parent_id": None,
                "slowmode_seconds": 0, "user_limit": None, "background_file_id": None, "icon_file_id": None,
                "dm_owner_id": None, "is_group": False, "dm_pair": None, "last_message_id": None,
                "created_at": created,
            })
        members.extend({"guild_id": gid, "user_id": uid, "nick": None, "nick_norm": None, "joined_at": created,
                        "timeout_until": None} for uid in who)
    return guilds, roles, rooms, members


def message_rows(plan: Plan) -> Iterator[list[dict[str, Any]]]:
    from meadhall.core.text import norm

    rng = plan.rng
    rooms = plan.room_ids
    # A few busy rooms and a long tail (Zipf-like), so that the top-guilds ranking has something to rank.
    weights = [1 / (rank + 1) ** 0.9 for rank in range(len(rooms))]
    rng.shuffle(weights)
    room_of = rng.choices(range(len(rooms)), weights, k=MESSAGES)
    start = plan.now_ms - MESSAGE_DAYS * 86_400_000
    step = MESSAGE_DAYS * 86_400_000 / MESSAGES
    batch: list[dict[str, Any]] = []
    for i in range(MESSAGES):
        ms = start + int(i * step)
        r = room_of[i]
        gid = plan.guild_ids[r // ROOMS_PER_GUILD]
        content = " ".join(rng.choices(WORDS, k=rng.randint(2, 9)))
        batch.append({
            "id": snowflake(ms, i), "channel_id": rooms[r], "guild_id": gid,
            "author_id": rng.choice(plan.members[gid]), "webhook_id": None, "webhook_name": None,
            "webhook_avatar": None, "content": content, "content_norm": norm(content), "kind": "normal",
            "recipient_id": None, "system_event": None, "nonce": None, "reply_to_id": None, "mentions": [],
            "mention_channels": [], "mention_everyone": False, "suppress_embeds": False, "pinned": False,
            "pinned_at": None, "created_at": at(ms), "edited_at": None,
        })
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def audit_rows(plan: Plan) -> Iterator[list[dict[str, Any]]]:
    """Audit entries oldest first: 90 % guild actions, 10 % instance actions; a few thousand actors with a
    skew (moderators of busy guilds write most entries); targets among all users."""
    rng = plan.rng
    actors = rng.sample(plan.user_ids, AUDIT_ACTORS)
    actor_weights = [1 / (rank + 1) for rank in range(AUDIT_ACTORS)]
    start = plan.now_ms - AUDIT_DAYS * 86_400_000
    step = AUDIT_DAYS * 86_400_000 / AUDIT
    batch: list[dict[str, Any]] = []
    for i in range(AUDIT):
        ms = start + int(i * step)
        if rng.random() < 0.9:
            action, target_type = rng.choice(AUDIT_ACTIONS)
            guild_id: int | None = rng.choice(plan.guild_ids)
            actor: int | None = rng.choices(actors, actor_weights)[0]
        else:
            action, target_type = rng.choice(INSTANCE_ACTIONS)
            guild_id, actor = None, plan.admin_id if rng.random() < 0.8 else None
        target = rng.choice(plan.user_ids) if target_type == "user" else rng.getrandbits(60)
        batch.append({
            "id": snowflake(ms, i), "action": action, "guild_id": guild_id, "actor_id": actor,
            "target_type": target_type, "target_id": None if target_type in ("invite", "settings") else target,
            "reason": f"reason {i % 50}" if i % 4 == 0 else None,
            "data": {"changes": {"name": [f"old{i % 13}", f"new{i % 17}"]}} if i % 3 == 0 else {},
            "created_at": at(ms),
        })
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def session_rows(plan: Plan) -> list[dict[str, Any]]:
    rng = plan.rng
    rows = []
    for i, uid in enumerate(rng.choices(plan.user_ids[:-1000], k=SESSIONS)):
        ms = plan.now_ms - rng.randrange(1, 25 * 86_400_000)
        rows.append({
            "id": snowflake(ms, i), "user_id": uid, "token_hash": secrets.token_hex(32), "token_created_at": at(ms),
            "prev_token_hash": None, "prev_valid_until": None, "created_at": at(ms), "last_used_at": at(ms),
            "ip": f"10.{i % 250}.{i % 200}.{i % 100}", "user_agent": "bench", "method": "password",
            "step_up_expires_at": None,
        })
    return rows


def file_rows(plan: Plan, message_ids: list[int], message_rooms: dict[int, tuple[int, int]]) -> list[dict[str, Any]]:
    rng = plan.rng
    rows = []
    for i, mid in enumerate(rng.sample(message_ids, FILES)):
        room, gid = message_rooms[mid]
        ms = (mid >> 22) + 1_704_067_200_000
        rows.append({
            "id": snowflake(ms, i + 7), "purpose": "attachment", "uploader_id": None,
            "original_name": f"photo{i}.png", "content_type": "image/png", "size": rng.randint(10_000, 5_000_000),
            "sha256": secrets.token_hex(32), "meta": {}, "guild_id": gid, "channel_id": room,
            "message_id": mid, "position": 0, "owner": "message", "owner_id": mid, "owner_key": None,
            "created_at": at(ms),
        })
    return rows


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
