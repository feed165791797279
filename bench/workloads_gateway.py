"""Gateway fan-out workloads (issue targets for the WebSocket gateway, docs/gateway.md).

- `gateway_fanout_1`, `_10`, `_50`: one sender POSTs messages into a room, one at a time; N users each
  hold one identified gateway connection. Latency = POST start -> the last receiver has read the
  MESSAGE_CREATE of that message (matched by nonce).
- `gateway_viewers_1000`: 1000 users joined to one guild, each with one identified connection; senders
  post at a steady rate (open loop, GATEWAY_RATE messages/s, default 25) so that deliveries/s = rate x 1000.
  Checks that every connection receives every message exactly once, in the same order everywhere, with
  contiguous `s`; reports deliveries/s, last-receiver latency, server CPU, and server RSS before and after
  the connections (KiB per connection).

The receivers are `LeanGateway` connections (bench/gateway_client.py), not `websockets`: one core has to
read 20,000+ frames/s here, and the figure must measure the server, not the client.

Connections survive between runs as gateway sessions: a run closes its connections and the next one
RESUMEs them (as real clients do), so that detached sessions do not pile up in the hub and make later
runs deliver to more sessions than the first.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import secrets
import time
from collections.abc import Callable
from typing import Any

import httpx

from bench.drivers import Context, OpError, Samples, Skip
from bench.gateway_client import LeanGateway, Tracker
from bench.gateway_fleet import Fleet, guild_with_members, probe_gateway, progress, server_times
from bench.harness import ServerProcess, mib, ms, percentile, snapshot
from bench.workloads import register

DELIVERY_WAIT = 10.0  # after the last send, how long missing deliveries are waited for
VIEWERS = 1000
VIEWER_SENDERS = 8
DEFAULT_RATE = 25.0  # messages/s into the viewers' room: 25,000 deliveries/s with 1000 viewers
CREATE_USERS_LIMIT = 1800.0  # seconds allowed to `meadhall create-user --count 1000`


def _auth(user: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user['token']}"}


def _cpu_self() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


# ---- fan-out latency: 1, 10, 50 receivers ------------------------------------------------------------
#
# Disjoint users per workload (sender + receivers), so that one workload's detached gateway sessions
# (kept 120 s by the server) are not in the next one's audience.

FANOUTS = {1: 0, 10: 2, 50: 13}  # receivers -> index of the sender among the prepared users


def _fanout_users(ctx: Context, receivers: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    users = ctx.users()
    first = FANOUTS[receivers]
    return users[first], users[first + 1:first + 1 + receivers]


def _fanout_setup(receivers: int) -> Callable[[Context], Any]:
    async def setup(ctx: Context) -> None:
        sender, receivers_ = _fanout_users(ctx, receivers)
        await probe_gateway(ctx, sender)
        await guild_with_members(ctx, f"gw_fanout_room:{receivers}", sender, receivers_, f"Fanout {receivers}")

    return setup


def _fanout(receivers: int) -> Callable[[Context], Any]:
    async def fn(ctx: Context) -> Samples:
        sender, receivers_ = _fanout_users(ctx, receivers)
        room = ctx.shared[f"gw_fanout_room:{receivers}"]
        run = ctx.shared[f"gw_fanout_run:{receivers}"] = ctx.shared.get(f"gw_fanout_run:{receivers}", 0) + 1
        fleet = Fleet(ctx.server, receivers_, f"fanout{receivers}", ctx.shared)
        await fleet.connect()
        tracker = Tracker(len(receivers_))
        fleet.track(tracker)
        samples = Samples()
        cpu0 = _cpu_self()
        try:
            async with ctx.http_pool(1) as http:
                server0 = snapshot(ctx.server.pid).cpu_s  # the send phase alone: not the RESUMEs nor the close
                phase = time.perf_counter()
                for i in range(ctx.requests):
                    nonce = f"f{receivers}r{run}m{i}"
                    start = time.perf_counter()
                    sent = tracker.expect(nonce, i, start, future=True)
                    try:
                        resp = await http.post(f"/api/v1/channels/{room}/messages",
                                               json={"content": f"fanout message {i}", "nonce": nonce},
                                               headers=_auth(sender))
                        if resp.status_code != 201:
                            raise OpError(f"send: HTTP {resp.status_code} {resp.text[:120]}")
                        assert sent.done is not None
                        await asyncio.wait_for(sent.done, 5.0)
                    except TimeoutError:
                        samples.error(f"message {i}: {sent.count}/{len(receivers_)} receivers within 5 s")
                        continue
                    except Exception as exc:  # an HTTP failure: one counted error
                        samples.error(str(exc)[:200] or type(exc).__name__)
                        continue
                    samples.latencies.append(sent.last - start)
                samples.wall_s = time.perf_counter() - phase
                server_cpu = snapshot(ctx.server.pid).cpu_s - server0
            check = fleet.check(tracker)
            client_cpu = _cpu_self() - cpu0
        finally:
            await fleet.close()
        if not check.ok:
            samples.error(f"deliveries: {check.describe()}")
        samples.figures["server_cpu_ms_per_message"] = round(server_cpu * 1000 / max(1, ctx.requests), 4)
        spread = sorted(s.last - s.first for s in tracker.complete())
        progress(f"gateway_fanout_{receivers}: {check.describe()}; first-to-last receiver p50 "
                 f"{ms(percentile(spread, 50))} ms; client cpu {client_cpu:.2f} s "
                 f"({client_cpu / (samples.wall_s or 1):.0%} of the send phase); sessions identified "
                 f"{fleet.identified}, resumed {fleet.resumed}")
        return samples

    return fn


for _n in FANOUTS:
    register(f"gateway_fanout_{_n}", setup=_fanout_setup(_n), needs_users=FANOUTS[_n] + 1 + _n,
             description=f"POST a message (one at a time) into a room with {_n} receiver(s) on the gateway; "
                         "latency = POST start -> MESSAGE_CREATE read by the last receiver")(_fanout(_n))


# ---- 1000 viewers of one room -----------------------------------------------------------------------


def _rate() -> float:
    return float(os.environ.get("GATEWAY_RATE", DEFAULT_RATE))


async def _viewer_users(ctx: Context) -> list[dict[str, Any]]:
    """The 1000 viewers: the users the harness prepared when there are enough, else made here with
    `meadhall create-user --count 1000 --sessions FILE` (about 0.2 s of argon2 per user, one at a time:
    3-6 minutes, more than the harness allows its own create-user, and a failure here skips only this
    workload)."""
    if "gw_viewer_users" in ctx.shared:
        return list(ctx.shared["gw_viewer_users"])
    users = list(ctx.shared.get("users") or [])
    if len(users) < VIEWERS:
        path = ctx.data_dir.parent / f"viewers-{secrets.token_hex(4)}.jsonl"
        started = time.perf_counter()
        progress(f"gateway_viewers_1000: meadhall create-user --count {VIEWERS} --sessions {path.name} ...")
        rc, out, err = await ctx.cli("create-user", "--count", str(VIEWERS), "--prefix",
                                     f"gwv{secrets.token_hex(3)}u", "--sessions", str(path),
                                     "--data-dir", str(ctx.data_dir), limit=CREATE_USERS_LIMIT)
        if rc != 0:
            tail = (err or out).strip().splitlines()[-1:] or ["no output"]
            raise Skip(f"skipped: meadhall create-user --count {VIEWERS} failed (exit {rc}): {tail[0][:200]}")
        users = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        progress(f"gateway_viewers_1000: {len(users)} users created in {time.perf_counter() - started:.0f} s")
    ctx.shared["gw_viewer_users"] = users[:VIEWERS]
    return users[:VIEWERS]


async def _viewers_setup(ctx: Context) -> None:
    users = await _viewer_users(ctx)
    await probe_gateway(ctx, users[0])
    await guild_with_members(ctx, "gw_viewers_room", users[0], users[1:], "Viewers")
    # Memory of the connections, measured once on first connection (IDENTIFY, READY built).
    await asyncio.sleep(0.5)
    before = snapshot(ctx.server.pid)
    fleet = Fleet(ctx.server, users, "viewers", ctx.shared)
    seconds = await fleet.connect(resume=False)
    await asyncio.sleep(1.0)
    after = snapshot(ctx.server.pid)
    await fleet.close()
    per_conn = (after.rss_kib - before.rss_kib) / VIEWERS
    ctx.shared["gw_viewers_memory"] = (before.rss_kib, after.rss_kib)
    progress(f"gateway_viewers_1000: {VIEWERS} connections identified in {seconds:.1f} s; server RSS "
             f"{mib(before.rss_kib)} MiB before, {mib(after.rss_kib)} MiB after: {per_conn:.1f} KiB per "
             f"connection (target <= 40)")


@register("gateway_viewers_1000", setup=_viewers_setup,
          description=f"{VIEWERS} identified gateway connections viewing one room (users made in setup with "
                      f"`meadhall create-user --count {VIEWERS}`); {VIEWER_SENDERS} senders post "
                      "at GATEWAY_RATE msg/s (default 25, open loop); latency = POST start -> read by the last "
                      "viewer; every viewer must read every message once, in order")
async def gateway_viewers_1000(ctx: Context) -> Samples:
    users = await _viewer_users(ctx)
    room = ctx.shared["gw_viewers_room"]
    run = ctx.shared["gw_viewers_run"] = ctx.shared.get("gw_viewers_run", 0) + 1
    senders = users[:VIEWER_SENDERS]
    rate = _rate()
    fleet = Fleet(ctx.server, users, "viewers", ctx.shared)
    rss0 = snapshot(ctx.server.pid).rss_kib
    connect_s = await fleet.connect()
    tracker = Tracker(len(users))
    fleet.track(tracker)
    samples = Samples()
    late: list[float] = []
    await asyncio.sleep(0.5)
    rss1 = snapshot(ctx.server.pid).rss_kib
    try:
        async with ctx.http_pool(VIEWER_SENDERS * 2) as http:

            async def send(i: int) -> None:
                nonce = f"v{run}m{i}"
                sender = senders[i % len(senders)]
                async with http.client() as client:
                    start = time.perf_counter()
                    late.append(start - scheduled[i])
                    tracker.expect(nonce, i, start, future=False)
                    try:
                        resp = await client.post(f"/api/v1/channels/{room}/messages",
                                                 json={"content": f"viewers message {i}", "nonce": nonce},
                                                 headers=_auth(sender))
                    except Exception as exc:  # an HTTP failure: one counted error
                        samples.error(str(exc)[:200] or type(exc).__name__)
                        return
                if resp.status_code != 201:
                    samples.error(f"send: HTTP {resp.status_code} {resp.text[:120]}")

            server0 = snapshot(ctx.server.pid)
            times0 = server_times(ctx.server.pid)
            cpu0 = _cpu_self()
            phase = time.perf_counter()
            scheduled = [phase + i / rate for i in range(ctx.requests)]
            tasks: list[asyncio.Task[None]] = []
            for i, at in enumerate(scheduled):
                delay = at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(send(i)))
            await asyncio.gather(*tasks)
            sent_all = time.perf_counter()
            deadline = sent_all + DELIVERY_WAIT
            while len(tracker.complete()) < len(tracker.messages) and time.perf_counter() < deadline:
                if all(c.closed is not None for c in fleet.conns):
                    break
                await asyncio.sleep(0.05)
            last_read = max((s.last for s in tracker.messages.values() if s.count), default=sent_all)
            wall = max(last_read, sent_all) - phase
            client_cpu = _cpu_self() - cpu0
            server1 = snapshot(ctx.server.pid)
            times1 = server_times(ctx.server.pid)
        await asyncio.sleep(0.5)
        rss2 = snapshot(ctx.server.pid).rss_kib
        check = fleet.check(tracker)
    finally:
        await fleet.close()
    complete = tracker.complete()
    samples.latencies = [s.last - s.start for s in complete]
    samples.wall_s = wall
    if not check.ok:
        samples.error(f"deliveries: {check.describe()}")
    server_cpu = server1.cpu_s - server0.cpu_s
    server_sys = times1[1] - times0[1]
    late.sort()
    spread = sorted(s.last - s.first for s in complete)
    samples.figures.update(server_cpu_us_per_delivery=round(server_cpu * 1e6 / max(1, check.deliveries), 2),
                           kib_per_connection=round((rss1 - rss0) / VIEWERS, 1),
                           kib_per_connection_resume=round((rss2 - rss0) / VIEWERS, 1))
    progress(f"gateway_viewers_1000 pass {run}: rate {rate:g} msg/s -> {check.deliveries / wall:.0f} deliveries/s "
             f"over {wall:.2f} s; {check.describe()}")
    progress(f"gateway_viewers_1000 pass {run}: server cpu {server_cpu:.2f} s = {server_cpu / wall:.0%} of a core, "
             f"{server_cpu * 1e6 / max(1, check.deliveries):.1f} us per delivery ({server_sys / (server_cpu or 1):.0%} "
             f"in the kernel); client cpu {client_cpu:.2f} s "
             f"= {client_cpu / wall:.0%}; first-to-last viewer p50 {ms(percentile(spread, 50))} ms, p99 "
             f"{ms(percentile(spread, 99))} ms; send start late p99 {ms(percentile(late, 99))} ms")
    progress(f"gateway_viewers_1000 pass {run}: connect {connect_s:.1f} s (identified {fleet.identified}, resumed "
             f"{fleet.resumed}); server RSS {mib(rss0)} MiB before connecting, {mib(rss1)} MiB connected "
             f"({(rss1 - rss0) / VIEWERS:.1f} KiB/connection), {mib(rss2)} MiB after the messages "
             f"({(rss2 - rss0) / VIEWERS:.1f} KiB/connection with resume buffers)")
    return samples


# ---- RESUME storm: many connections resume at once while live fan-out goes on --------------------------
#
# STORM_RESUMERS users' connections close, the room keeps getting messages (numbered for their detached
# sessions), then all of them RESUME at the same moment while STORM_WATCHERS other members watch the room
# live. What the storm costs the others: the watchers' delivery rate and latency before and during it, and
# the node's bus lag (its /metrics) in each window. Users after the fan-out workloads' (disjoint audiences).

STORM_FIRST = 64
STORM_WATCHERS = 20
STORM_RATE = 25.0  # messages/s into the room (open loop, GATEWAY_STORM_RATE): 500 live deliveries/s to the
# watchers, and as many appends per second for each detached session


_LAG_BUCKET = re.compile(r'^meadhall_bus_lag_seconds_bucket\{le="([^"]+)"\} ([0-9.e+]+)$', re.MULTILINE)


async def bus_lag_buckets(server: ServerProcess) -> dict[float, float]:
    """Cumulative counts of the node's `meadhall_bus_lag_seconds` by upper bound (the workload asks for
    METRICS_ENABLED)."""
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10.0, trust_env=False) as client:
        resp = await client.get("/metrics")
    if resp.status_code != 200:
        return {}
    return {float(le): float(n) for le, n in _LAG_BUCKET.findall(resp.text)}


def lag_p99(before: dict[float, float], after: dict[float, float]) -> str:
    """The p99 of what the histogram observed between two scrapes: the upper bound of its bucket."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0.0
    if not total:
        return "none observed"
    bound = next(b for b, n in zip(bounds, counts, strict=True) if n >= total * 0.99)
    return f"<= {ms(bound)} ms ({int(total)} events)" if bound != float("inf") else f"> {ms(bounds[-2])} ms"


def _storm_rate() -> float:
    return float(os.environ.get("GATEWAY_STORM_RATE", STORM_RATE))


def _storm_resumers() -> int:
    return int(os.environ.get("GATEWAY_STORM", 96))


def _storm_concurrency() -> int:
    """RESUMEs in flight at once (GATEWAY_STORM_CONCURRENCY, default all of them)."""
    return int(os.environ.get("GATEWAY_STORM_CONCURRENCY", _storm_resumers()))


def _storm_users(ctx: Context) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    users = ctx.users()
    sender = users[STORM_FIRST]
    watchers = users[STORM_FIRST + 1:STORM_FIRST + 1 + STORM_WATCHERS]
    resumers = users[STORM_FIRST + 1 + STORM_WATCHERS:STORM_FIRST + 1 + STORM_WATCHERS + _storm_resumers()]
    return sender, watchers, resumers


async def _storm_setup(ctx: Context) -> None:
    sender, watchers, resumers = _storm_users(ctx)
    await probe_gateway(ctx, sender)
    await guild_with_members(ctx, "gw_storm_room", sender, watchers + resumers, "Storm")


@register("gateway_resume_storm", setup=_storm_setup, needs_users=STORM_FIRST + 1 + STORM_WATCHERS + 96,
          metrics=True,
          description=f"GATEWAY_STORM (default 96) connections RESUME at once, a third into a phase of "
                      f"--requests messages sent at GATEWAY_STORM_RATE/s (default {STORM_RATE:g}) into a room that {STORM_WATCHERS} other "
                      "connections watch live; latency = POST start -> read by the last watcher; reports the "
                      "watchers' delivery rate, latency and the node's bus lag before and during the storm")
async def gateway_resume_storm(ctx: Context) -> Samples:
    sender, watchers, resumers = _storm_users(ctx)
    room = ctx.shared["gw_storm_room"]
    run = ctx.shared["gw_storm_run"] = ctx.shared.get("gw_storm_run", 0) + 1
    away = Fleet(ctx.server, resumers, "storm_resumers", ctx.shared)
    await away.connect()
    await away.close()  # detached: the messages below are numbered for them, and replayed at their RESUME
    live = Fleet(ctx.server, watchers, "storm_watchers", ctx.shared)
    await live.connect()
    tracker = Tracker(len(watchers))
    live.track(tracker)
    samples = Samples()
    timeline: list[tuple[float, int]] = []  # (time, deliveries to the watchers so far)
    storm: dict[str, Any] = {}
    resumed: list[LeanGateway] = []

    async def watch() -> None:
        while True:
            timeline.append((time.perf_counter(), sum(c.got for c in live.conns)))
            await asyncio.sleep(0.1)

    async def resume_all() -> None:
        storm["lag0"] = await bus_lag_buckets(ctx.server)
        storm["start"] = time.perf_counter()
        gate = asyncio.Semaphore(_storm_concurrency())

        async def one(user: dict[str, Any]) -> float:
            conn = LeanGateway(user, ctx.server.host, ctx.server.port)
            resumed.append(conn)
            async with gate:
                started = time.perf_counter()
                await conn.open(away.sessions.get(user["id"]), wait=60.0)
                return time.perf_counter() - started

        storm["resume_s"] = sorted(await asyncio.gather(*(one(u) for u in resumers)))
        storm["end"] = time.perf_counter()
        await asyncio.sleep(1.0)
        storm["lag1"] = await bus_lag_buckets(ctx.server)

    watcher = asyncio.create_task(watch())
    lag_start = await bus_lag_buckets(ctx.server)
    try:
        async with ctx.http_pool(16) as http:

            async def send(i: int) -> None:
                nonce = f"storm{run}m{i}"
                async with http.client() as client:
                    start = time.perf_counter()
                    tracker.expect(nonce, i, start, future=False)
                    try:
                        resp = await client.post(f"/api/v1/channels/{room}/messages",
                                                 json={"content": f"storm message {i}", "nonce": nonce},
                                                 headers=_auth(sender))
                    except Exception as exc:  # an HTTP failure: one counted error
                        samples.error(str(exc)[:200] or type(exc).__name__)
                        return
                if resp.status_code != 201:
                    samples.error(f"send: HTTP {resp.status_code} {resp.text[:120]}")

            phase = time.perf_counter()
            rate = _storm_rate()
            scheduled = [phase + i / rate for i in range(ctx.requests)]
            tasks: list[asyncio.Task[None]] = []
            storm_task: asyncio.Task[None] | None = None
            for i, at in enumerate(scheduled):
                delay = at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(send(i)))
                if i == len(scheduled) // 3:
                    storm_task = asyncio.create_task(resume_all())
            await asyncio.gather(*tasks)
            if storm_task is not None:
                await storm_task
            deadline = time.perf_counter() + DELIVERY_WAIT
            while len(tracker.complete()) < len(tracker.messages) and time.perf_counter() < deadline:
                if all(c.closed is not None for c in live.conns):
                    break
                await asyncio.sleep(0.05)
            lag_end = await bus_lag_buckets(ctx.server)
        check = live.check(tracker)
        storm_gaps = sum(c.gaps for c in resumed)
        storm_closed = [c.closed for c in resumed if c.closed is not None]
    finally:
        watcher.cancel()
        for conn in resumed:
            if conn.session_id is not None and conn.closed is None:
                away.sessions[conn.user["id"]] = (conn.session_id, conn.last_s)
            conn.close()
        await live.close()
    samples.latencies = [s.last - s.start for s in tracker.complete()]
    samples.wall_s = max(s.last for s in tracker.complete()) - phase if tracker.complete() else 0.0
    if not check.ok:
        samples.error(f"deliveries: {check.describe()}")
    if storm_gaps or storm_closed:
        samples.error(f"resumed connections: {storm_gaps} gaps in s, closed {storm_closed[:3]}")

    def delivery_rate(t0: float, t1: float) -> tuple[float, float]:
        """The watchers' deliveries/s over [t0, t1], and the lowest over any 0.5 s within it."""
        points = [(t, n) for t, n in timeline if t0 <= t <= t1]
        if len(points) < 2:
            return 0.0, 0.0
        mean = (points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0])
        lows = [(n2 - n1) / (t2 - t1_) for (t1_, n1), (t2, n2) in zip(points, points[5:], strict=False)]
        return mean, min(lows, default=mean)

    def latency(t0: float, t1: float) -> str:
        lat = sorted(s.last - s.start for s in tracker.complete() if t0 <= s.start < t1)
        return f"p50 {ms(percentile(lat, 50))} ms, p99 {ms(percentile(lat, 99))} ms, max {ms(lat[-1] if lat else 0)} ms"

    def lag(a: dict[float, float], b: dict[float, float]) -> str:
        return f"bus lag p99 {lag_p99(a, b)}"

    s0, s1 = storm["start"], storm["end"] + 1.0
    before, before_low = delivery_rate(phase, s0)
    during, during_low = delivery_rate(s0, s1)
    resume_s = storm["resume_s"]
    progress(f"gateway_resume_storm pass {run}: {len(resumers)} RESUMEs at once in {s1 - 1.0 - s0:.2f} s "
             f"(each: p50 {ms(percentile(resume_s, 50))} ms, p99 {ms(percentile(resume_s, 99))} ms); "
             f"{check.describe()}")
    progress(f"gateway_resume_storm pass {run}: watchers' deliveries/s before {before:.0f} (lowest 0.5 s "
             f"{before_low:.0f}), during the storm {during:.0f} (lowest 0.5 s {during_low:.0f}); latency before "
             f"{latency(phase, s0)}; during {latency(s0, s1)}")
    progress(f"gateway_resume_storm pass {run}: before the storm {lag(lag_start, storm['lag0'])}; during "
             f"{lag(storm['lag0'], storm['lag1'])}; after {lag(storm['lag1'], lag_end)}")
    return samples
