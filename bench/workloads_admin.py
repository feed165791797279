"""Instance-administration workloads (issue 20 targets) on the data set of bench/seed_admin.py: 100,000
users, 1,000,000 messages over 60 days, 250,000 audit entries.

- `admin_user_search`: `GET /instance/users?q=` with common and rare substrings, one at a time; p50/p95/p99 per
  group and per substring on stderr (p95 <= 50 ms).
- `admin_audit_page`: `GET /instance/audit-logs` with no filter and with each single filter, one at a time;
  p50/p95/p99 per filter on stderr (p95 <= 30 ms with any one filter).
- `admin_stats`: `GET /instance/stats?days=30`, one at a time (<= 300 ms).
- `admin_audit_export`: `GET /instance/audit-logs/export` of 100,000 rows read as a stream; time, bytes, rows
  and the server's RSS sampled every 10 ms during the stream against just before it (flat memory).

Setup, once per bench run: the data set is built or found in the cache (bench/seed_admin.py), then the
server is restarted on it (same port) with the seed's SECRET_KEY, since the harness starts it on an empty
database with a random key: for SQLite the cached file is copied into DATA_DIR, for PostgreSQL the server is
pointed at the seeded database beside the one given with `--database-url`. So run these workloads on their
own or last: earlier workloads' data is not on the restarted server.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

# The other workload modules first, so that the registry (the order of a run of all workloads) ends with
# these: their setup restarts the server on another database.
import bench.workloads_gateway  # noqa: F401
import bench.workloads_messages  # noqa: F401
import bench.workloads_social  # noqa: F401
from bench.drivers import Context, HttpPool, OpError, Samples, Skip, expect
from bench.harness import RssSampler, mib, ms, percentile, snapshot
from bench.seed_admin import SEED_SECRET, ensure_postgres, ensure_sqlite
from bench.workloads import register

API = "/api/v1"
# Substrings of logins and display names (bench/seed_admin.py builds `first.last<i>` and
# "First Last <i % 997>"): common ones match thousands of users, rare ones a handful or none.
USER_QUERIES = {
    "common": ("anna", "smith", "er", "an", "Ivanov", "ra", "hans.m", "1"),
    "rare": ("anna.smith0", "zoe.weber9", "42424", "Freya Dahl 9", "xylophone", "thor.ostby", "%_", "kvist7"),
}


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _report_groups(name: str, by_group: dict[str, list[float]]) -> None:
    for group, values in by_group.items():
        lat = sorted(values)
        figures = ", ".join(f"p{q} {ms(percentile(lat, q))} ms" for q in (50, 95, 99))
        progress(f"{name} [{group}] {len(lat)} ops: {figures}, max {ms(lat[-1]) if lat else None} ms")


# ---- setup: the seeded server ------------------------------------------------------------------------


def _retarget_rss_sampler(old_pid: int, new_pid: int) -> None:
    """The harness samples the RSS of the pid it started; after the restart that process is gone."""
    for thread in threading.enumerate():
        sampler = getattr(getattr(thread, "_target", None), "__self__", None)
        if isinstance(sampler, RssSampler) and sampler.pid == old_pid:
            sampler.pid = new_pid


async def _fresh_admin(ctx: Context) -> dict[str, Any]:
    """A new administrator with a CLI-issued session for this run: a session kept with the seed would be
    rotated (after 24 h) or expire (after 30 days) while the cache lives on."""
    name = f"benchadm{secrets.token_hex(4)}"
    path = ctx.data_dir.parent / f"{name}.jsonl"
    rc, out, err = await ctx.cli("create-user", "--username", name, "--email", f"{name}@bench.example", "--admin",
                                 "--sessions", str(path), "--data-dir", str(ctx.data_dir))
    if rc != 0:
        raise OpError(f"meadhall create-user --admin failed (exit {rc}): {(err or out).strip()[-300:]}")
    return dict(json.loads(path.read_text().splitlines()[0]))


async def _restart_on_seed(ctx: Context) -> dict[str, Any]:
    server = ctx.server
    env = server.env
    postgres = bool(env.get("DATABASE_URL"))
    started = time.perf_counter()
    if postgres:
        url, _ = await ensure_postgres(env["DATABASE_URL"])
    else:
        path, _ = await ensure_sqlite()
    old_pid = server.pid
    server.stop()
    if postgres:
        env["DATABASE_URL"] = url
    else:
        for suffix in ("", "-wal", "-shm"):
            (ctx.data_dir / f"chat.db{suffix}").unlink(missing_ok=True)
        await asyncio.to_thread(shutil.copyfile, path, ctx.data_dir / "chat.db")
    env["SECRET_KEY"] = SEED_SECRET
    server.exit_code = None
    server.start()
    await server.wait_ready(limit=300)
    _retarget_rss_sampler(old_pid, server.pid)
    admin = await _fresh_admin(ctx)
    async with ctx.http() as http:  # the session and the seed's email key work on this server
        me = expect(await http.get(f"{API}/users/@me", headers={"Authorization": f"Bearer {admin['token']}"}))
        if me.json().get("user", me.json()).get("email") is None:
            raise OpError(f"the seeded administrator's profile has no email: {me.text[:200]}")
    progress(f"admin: server restarted on the seeded {'PostgreSQL' if postgres else 'SQLite'} data set in "
             f"{time.perf_counter() - started:.1f} s (pid {server.pid}, rss {mib(snapshot(server.pid).rss_kib)} MiB)")
    return admin


async def _sample_filters(ctx: Context) -> dict[str, Any]:
    """Filter values read from the seeded database: the busiest and a quiet actor, a target with several
    entries, a guild, an action."""
    from sqlalchemy import func, select

    from meadhall.config import Settings
    from meadhall.db.engine import create_engine
    from meadhall.db.schema import audit_log

    settings = Settings(DATA_DIR=ctx.data_dir, DATABASE_URL=ctx.env.get("DATABASE_URL") or None,
                        SECRET_KEY=SEED_SECRET)
    engine = create_engine(settings.database_url)
    try:
        async with engine.connect() as conn:
            by_actor = (await conn.execute(
                select(audit_log.c.actor_id, func.count()).where(audit_log.c.actor_id.is_not(None))
                .group_by(audit_log.c.actor_id).order_by(func.count().desc()))).all()
            target = (await conn.execute(
                select(audit_log.c.target_id).where(audit_log.c.target_type == "user")
                .group_by(audit_log.c.target_id).order_by(func.count().desc()).limit(1))).scalar_one()
            guild = (await conn.execute(select(audit_log.c.guild_id).where(audit_log.c.guild_id.is_not(None))
                                        .limit(1))).scalar_one()
    finally:
        await engine.dispose()
    return {"actor_busy": str(by_actor[0][0]), "actor_quiet": str(by_actor[-1][0]), "target": str(target),
            "guild": str(guild)}


async def _admin_setup(ctx: Context) -> None:
    if "admin_seed" not in ctx.shared:
        admin = await _restart_on_seed(ctx)
        ctx.shared["admin_seed"] = {"admin": admin, "filters": await _sample_filters(ctx)}


def _auth(ctx: Context) -> dict[str, str]:
    return {"Authorization": f"Bearer {ctx.shared['admin_seed']['admin']['token']}"}


async def _probe(ctx: Context, path: str, params: dict[str, Any] | None = None) -> Any:
    async with ctx.http() as http:
        resp = await http.get(API + path, params=params, headers=_auth(ctx))
    if resp.status_code in (404, 405):
        raise Skip(f"skipped: GET {API}{path} not available (HTTP {resp.status_code})")
    return expect(resp, 200)


def _grouped_op(http: HttpPool, ctx: Context, path: str, plan: list[tuple[str, dict[str, str]]],
                by_group: dict[str, list[float]], check: Callable[[Any], None],
                by_value: tuple[str, dict[str, list[float]]] | None = None) -> Callable[[int], Any]:
    """One request of `plan` per operation, in turn; latencies by group (and, with `by_value`, by the value
    of that parameter too)."""
    headers = _auth(ctx)

    async def op(i: int) -> float:
        group, params = plan[i % len(plan)]
        started = time.perf_counter()
        resp = expect(await http.get(API + path, params=params, headers=headers))
        elapsed = time.perf_counter() - started
        check(resp.json())
        by_group[group].append(elapsed)
        if by_value is not None:
            by_value[1].setdefault(params[by_value[0]], []).append(elapsed)
        return elapsed

    return op


# ---- user search -------------------------------------------------------------------------------------


async def _users_setup(ctx: Context) -> None:
    await _admin_setup(ctx)
    page = (await _probe(ctx, "/instance/users", {"q": "anna", "limit": "50"})).json()
    progress(f"admin_user_search: q=anna -> total {page.get('total')}, {len(page.get('users', []))} on the page")


def _has(key: str) -> Callable[[Any], None]:
    def check(body: Any) -> None:
        if key not in body or "total" not in body:
            raise OpError(f"answer without {key} or total")

    return check


@register("admin_user_search", setup=_users_setup,
          description="GET /instance/users?q= over 100,000 users, common and rare substrings in turn, one at a "
                      "time; p50/p95/p99 per group and per part on stderr (target p95 <= 50 ms)")
async def admin_user_search(ctx: Context) -> Samples:
    plan = [(group, {"q": q, "limit": "50"}) for group, queries in USER_QUERIES.items() for q in queries]
    by_group: dict[str, list[float]] = {group: [] for group in USER_QUERIES}
    by_part: dict[str, list[float]] = {}
    async with ctx.http_pool(1) as http:
        samples = await ctx.drive(_grouped_op(http, ctx, "/instance/users", plan, by_group, _has("users"),
                                              by_value=("q", by_part)), concurrency=1)
    _report_groups("admin_user_search", by_group)
    _report_groups("admin_user_search q", by_part)  # which parts make the tail
    return samples


# ---- audit list --------------------------------------------------------------------------------------


def _audit_plan(ctx: Context) -> list[tuple[str, dict[str, str]]]:
    f = ctx.shared["admin_seed"]["filters"]
    from datetime import UTC, datetime, timedelta

    today = datetime.now(UTC).date()
    week = {"from": str(today - timedelta(days=97)), "to": str(today - timedelta(days=90))}
    return [
        ("none", {}),
        ("action", {"action": "member.kick"}),
        ("action_rare", {"action": "instance.settings_update"}),
        ("actor_id", {"actor_id": f["actor_busy"]}),
        ("actor_id_rare", {"actor_id": f["actor_quiet"]}),
        ("target_id", {"target_id": f["target"]}),
        ("guild_id", {"guild_id": f["guild"]}),
        ("from_to", week),
        ("from", {"from": week["from"]}),
    ]


async def _audit_setup(ctx: Context) -> None:
    await _admin_setup(ctx)
    for group, params in _audit_plan(ctx):
        page = (await _probe(ctx, "/instance/audit-logs", {**params, "limit": "50"})).json()
        progress(f"admin_audit_page [{group}] {params}: total {page.get('total')}, "
                 f"{len(page.get('audit_entries', []))} on the page, has_more {page.get('has_more')}")


@register("admin_audit_page", setup=_audit_setup,
          description="GET /instance/audit-logs?limit=50 over 250,000 entries, no filter and each single filter "
                      "in turn, one at a time; per-filter p50/p95/p99 on stderr (target p95 <= 30 ms)")
async def admin_audit_page(ctx: Context) -> Samples:
    plan = [(group, {**params, "limit": "50"}) for group, params in _audit_plan(ctx)]
    by_group: dict[str, list[float]] = {group: [] for group, _ in plan}
    async with ctx.http_pool(1) as http:
        samples = await ctx.drive(_grouped_op(http, ctx, "/instance/audit-logs", plan, by_group,
                                              _has("audit_entries")), concurrency=1)
    _report_groups("admin_audit_page", by_group)
    return samples


# ---- stats -------------------------------------------------------------------------------------------


async def _stats_setup(ctx: Context) -> None:
    await _admin_setup(ctx)
    stats = (await _probe(ctx, "/instance/stats", {"days": "30"})).json().get("stats", {})
    progress(f"admin_stats: users {stats.get('users', {}).get('total')}, messages "
             f"{stats.get('messages', {}).get('total')}, storage {stats.get('storage')}")


@register("admin_stats", setup=_stats_setup, max_ops=50,
          description="GET /instance/stats?days=30 (100,000 users, 1,000,000 messages), one at a time "
                      "(target 300 ms)")
async def admin_stats(ctx: Context) -> Samples:
    async with ctx.http_pool(1) as http:

        async def op(_: int) -> None:
            resp = expect(await http.get(f"{API}/instance/stats?days=30", headers=_auth(ctx)))
            if "stats" not in resp.json():
                raise OpError("answer without stats")

        samples = await ctx.drive(op, concurrency=1)
    lat = sorted(samples.latencies)
    progress(f"admin_stats: p50 {ms(percentile(lat, 50))} ms, p95 {ms(percentile(lat, 95))} ms, "
             f"max {ms(lat[-1]) if lat else None} ms")
    return samples


# ---- CSV export ----------------------------------------------------------------------------------------

EXPORT_ROWS = 100_000


async def _export_setup(ctx: Context) -> None:
    await _admin_setup(ctx)
    await _probe(ctx, "/instance/audit-logs/export", {"action": "instance.settings_update",
                                                       "from": "2999-01-01"})


async def _export_once(ctx: Context, http: Any) -> dict[str, Any]:
    """One export read as a stream; the server's RSS sampled every 10 ms from just before the request."""
    pid = ctx.server.pid
    await asyncio.sleep(0.2)  # let the previous answer's memory settle
    before = snapshot(pid).rss_kib
    sampler = RssSampler(pid, interval=0.01)
    sampler.start()
    size = lines = 0
    first = None
    tail = b""
    try:
        started = time.perf_counter()
        async with http.stream("GET", f"{API}/instance/audit-logs/export", headers=_auth(ctx)) as resp:
            if resp.status_code != 200:
                raise OpError(f"export: HTTP {resp.status_code} {(await resp.aread())[:160]!r}")
            async for chunk in resp.aiter_bytes():
                if first is None:
                    first = time.perf_counter() - started
                size += len(chunk)
                lines += chunk.count(b"\n")
                tail = (tail + chunk)[-200:]
        elapsed = time.perf_counter() - started
    finally:
        sampler.stop()
    peak = max(sampler.peak_kib, before)
    # The header line, and the closing `# sha256=...` line of the digest (docs/audit.md), are not rows.
    trailer = 1 if tail.rstrip(b"\r\n").rsplit(b"\n", 1)[-1].startswith(b"#") else 0
    return {"seconds": elapsed, "ttfb": first or elapsed, "bytes": size, "rows": lines - 1 - trailer,
            "rss_before_kib": before, "rss_peak_kib": peak, "rss_after_kib": snapshot(pid).rss_kib,
            "content_type": resp.headers.get("content-type")}


@register("admin_audit_export", setup=_export_setup, max_ops=3,
          description=f"GET /instance/audit-logs/export of {EXPORT_ROWS:,} rows as a stream, one at a time; "
                      "bytes, rows and the server's RSS rise during the stream on stderr (flat memory)")
async def admin_audit_export(ctx: Context) -> Samples:
    samples = Samples()
    phase = time.perf_counter()
    async with ctx.http(timeout=300.0) as http:
        for _ in range(ctx.requests):
            try:
                r = await _export_once(ctx, http)
            except Exception as exc:  # one counted error
                samples.error(str(exc)[:200] or type(exc).__name__)
                continue
            if r["rows"] < EXPORT_ROWS:
                samples.error(f"export of {r['rows']} rows (wanted {EXPORT_ROWS})")
            samples.latencies.append(r["seconds"])
            progress(f"admin_audit_export: {r['rows']} rows, {r['bytes'] / 1e6:.1f} MB in {r['seconds']:.2f} s "
                     f"(first byte {r['ttfb'] * 1000:.0f} ms, {r['bytes'] / 1e6 / r['seconds']:.1f} MB/s); server RSS "
                     f"{mib(r['rss_before_kib'])} MiB before, peak {mib(r['rss_peak_kib'])} MiB (+"
                     f"{mib(r['rss_peak_kib'] - r['rss_before_kib'])} MiB), {mib(r['rss_after_kib'])} MiB after; "
                     f"{r['content_type']}")
    samples.wall_s = time.perf_counter() - phase
    return samples
