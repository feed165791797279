"""Social workloads (issue 14 targets, docs/social.md):

- `social_ready`: IDENTIFY -> READY for a user with 100 guilds, 300 conversations (each with a message)
  and 1,000 friends. Latency = IDENTIFY sent -> READY frame read (loopback); the server CPU per READY
  (handshake included) and the server's own time from IDENTIFY received to READY handed to the
  connection (`meadhall_gateway_ready_seconds`) are reported beside it (target: 25 ms of server time).
- `social_dm_list`: `GET /users/@me/channels` of that user (300 conversations), one request at a time
  (target p99 10 ms); the server's own latency of the route (`meadhall_http_request_duration_seconds`)
  is reported beside it.

Both read the server's /metrics before and after their phase (`metrics=True`: the server then runs with
METRICS_ENABLED, which every request pays a little for, so only when one of them is selected).
- `social_presence_1000`: the user's 1,000 friends hold one gateway connection each; the user changes its
  custom status, one change at a time; latency = PATCH start -> the last friend has read the
  PRESENCE_UPDATE carrying the new status (target p99 50 ms). The same connections then receive messages
  of a room all 1,000 are members of, and the server CPU per delivery of both phases is reported side by
  side (target: presence no worse than room fan-out). The two phases alternate in blocks, each starting once
  the server is idle, right after the connections' heartbeats (Fleet.quiet): neither holds connects or
  heartbeats, and drift during the run falls on both alike.

- `social_presence_friends_only`: the same comparison for a second user with the same 1,000 friends and no guild:
  the status change is presence alone, where the first user's also announces them in 100 guilds (MEMBER_UPDATE).

Setup (once per bench run, through the public API): 1,002 users made with `meadhall create-user`, 1,000
friendships (request + accept), 300 one-to-one conversations with one message each, 100 guilds; the friends-only
workload adds the second user's 1,000 friendships.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from typing import Any

from bench.drivers import Context, OpError, Samples, Skip, expect
from bench.gateway_client import LeanGateway, Tracker
from bench.gateway_fleet import Fleet, guild_with_members, probe_gateway, progress, server_times
from bench.harness import mib, ms, percentile, snapshot
from bench.workloads import register
from bench.workloads_gateway import CREATE_USERS_LIMIT

FRIENDS = 1000
CONVERSATIONS = 300
GUILDS = 100
# The presence phase and the room phase alternate in this many blocks each (social_presence_1000).
COMPARISON_BLOCKS = 6
SETUP_CONCURRENCY = 16


def _auth(user: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user['token']}"}


async def _social_users(ctx: Context) -> list[dict[str, Any]]:
    """The central user, its 1,000 friends-to-be and a second central user who will have only those friends
    (made here: the harness prepares fewer)."""
    if "social_users" in ctx.shared:
        return list(ctx.shared["social_users"])
    count = FRIENDS + 2
    path = ctx.data_dir.parent / f"social-{secrets.token_hex(4)}.jsonl"
    started = time.perf_counter()
    progress(f"social: meadhall create-user --count {count} ...")
    rc, out, err = await ctx.cli("create-user", "--count", str(count), "--prefix", f"soc{secrets.token_hex(3)}u",
                                 "--sessions", str(path), "--data-dir", str(ctx.data_dir), limit=CREATE_USERS_LIMIT)
    if rc != 0:
        tail = (err or out).strip().splitlines()[-1:] or ["no output"]
        raise Skip(f"skipped: meadhall create-user --count {count} failed (exit {rc}): {tail[0][:200]}")
    users = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    progress(f"social: {len(users)} users created in {time.perf_counter() - started:.0f} s")
    ctx.shared["social_users"] = users
    return users


async def _parallel(ctx: Context, what: str, n: int, op: Any) -> None:
    done = await ctx.drive(op, n=n, concurrency=SETUP_CONCURRENCY)
    if done.errors:
        raise OpError(f"social setup, {what}: {done.errors} of {n} failed: {done.error_examples[:1]}")


async def _befriend_all(ctx: Context, http: Any, me: dict[str, Any], friends: list[dict[str, Any]], what: str) -> None:
    """`me` asks each of `friends`, who accepts (two PUTs each, SETUP_CONCURRENCY at a time)."""

    async def befriend(i: int) -> None:
        friend = friends[i]
        expect(await http.put(f"/api/v1/users/@me/relationships/{friend['id']}", json={"type": "friend"},
                              headers=_auth(me)), 200)
        expect(await http.put(f"/api/v1/users/@me/relationships/{me['id']}", json={"type": "friend"},
                              headers=_auth(friend)), 200)

    await _parallel(ctx, what, len(friends), befriend)


async def _social_setup(ctx: Context) -> None:
    if "social_ready_user" in ctx.shared:
        return
    users = await _social_users(ctx)
    me, friends = users[0], users[1:FRIENDS + 1]
    await probe_gateway(ctx, me)
    started = time.perf_counter()
    async with ctx.http_pool(SETUP_CONCURRENCY) as http:
        probe = await http.get("/api/v1/users/@me/relationships", headers=_auth(me))
        if probe.status_code in (404, 405):
            raise Skip(f"skipped: /users/@me/relationships not available (HTTP {probe.status_code})")

        await _befriend_all(ctx, http, me, friends, "friendships")

        async def converse(i: int) -> None:
            resp = expect(await http.post("/api/v1/users/@me/channels", json={"recipient_id": friends[i]["id"]},
                                          headers=_auth(me)), 200, 201)
            channel = resp.json()["channel"]["id"]
            expect(await http.post(f"/api/v1/channels/{channel}/messages",
                                   json={"content": f"hello number {i}"}, headers=_auth(friends[i])), 201)

        await _parallel(ctx, "conversations", CONVERSATIONS, converse)

        async def guild(i: int) -> None:
            expect(await http.post("/api/v1/guilds", json={"name": f"Social hall {i}"}, headers=_auth(me)), 201)

        await _parallel(ctx, "guilds", GUILDS, guild)
    progress(f"social: {len(friends)} friends, {CONVERSATIONS} conversations, {GUILDS} guilds in "
             f"{time.perf_counter() - started:.1f} s")
    ctx.shared["social_ready_user"] = me


# ---- the server's own histograms (the server runs with METRICS_ENABLED for these workloads) ----------


# Cumulative counts by upper bound in seconds (+Inf included), the sum in seconds, the count.
Histogram = tuple[dict[float, float], float, float]
READY_SECONDS = "meadhall_gateway_ready_seconds"
REQUEST_SECONDS = "meadhall_http_request_duration_seconds"


async def _histogram(ctx: Context, name: str, **labels: str) -> Histogram | None:
    """The histogram `name` (the series with these labels) from the server's /metrics; None when the
    server does not serve it."""
    from prometheus_client.parser import text_string_to_metric_families

    async with ctx.http() as client:
        resp = await client.get("/metrics")
    if resp.status_code != 200:
        return None
    buckets: dict[float, float] = {}
    total = count = 0.0
    found = False
    for family in text_string_to_metric_families(resp.text):
        if family.name != name:
            continue
        for sample in family.samples:
            if any(sample.labels.get(k) != v for k, v in labels.items()):
                continue
            found = True
            if sample.name == name + "_bucket":
                buckets[float(sample.labels["le"])] = sample.value
            elif sample.name == name + "_sum":
                total = sample.value
            elif sample.name == name + "_count":
                count = sample.value
    return (buckets, total, count) if found else None


def _since(before: Histogram | None, after: Histogram | None) -> Histogram | None:
    """What was observed between two scrapes (a series absent before counted nothing then)."""
    if after is None:
        return None
    if before is None:
        return after
    return ({le: n - before[0].get(le, 0.0) for le, n in after[0].items()}, after[1] - before[1],
            after[2] - before[2])


def _bucket_of(h: Histogram, q: float) -> str:
    """The bucket the q-th percentile falls in, e.g. '15-20 ms'."""
    lower = 0.0
    for le in sorted(h[0]):
        if h[0][le] >= h[2] * q / 100:
            return f"> {lower * 1000:g} ms" if le == float("inf") else f"{lower * 1000:g}-{le * 1000:g} ms"
        lower = le
    return "?"


def _server_side(h: Histogram | None, what: str, within: float | None = None) -> str:
    """`what` timed by the server itself: the mean, the buckets of p50 and p99, and the share at or below
    `within` seconds (a bucket boundary)."""
    if h is None or h[2] <= 0:
        return f"{what}: not in /metrics"
    text = (f"{what} (server side, {h[2]:.0f} timed): mean {h[1] * 1000 / h[2]:.2f} ms, p50 in {_bucket_of(h, 50)}, "
            f"p99 in {_bucket_of(h, 99)}")
    if within is not None and within in h[0]:
        text += f", {h[0][within] * 100 / h[2]:.1f}% <= {within * 1000:g} ms"
    return text


# ---- READY ------------------------------------------------------------------------------------------


async def _ready_once(ctx: Context, user: dict[str, Any]) -> tuple[float, int, dict[str, int]]:
    """(seconds from IDENTIFY to READY read, READY bytes, counts of the READY's lists)."""
    async with ctx.ws("/gateway?v=1&encoding=json", max_size=None) as ws:
        hello = json.loads(await ws.conn.recv())
        if hello.get("op") != 10:
            raise OpError(f"expected HELLO, got {hello}")
        started = time.perf_counter()
        await ws.conn.send(json.dumps({"op": 2, "d": {"token": user["token"], "properties": {}}}))
        raw = await ws.conn.recv()
        elapsed = time.perf_counter() - started
    frame = json.loads(raw)
    if frame.get("t") != "READY":
        raise OpError(f"expected READY, got {str(frame)[:200]}")
    d = frame["d"]
    counts = {"guilds": len(d["guilds"]), "dm_channels": len(d["dm_channels"]),
              "friends": len(d["relationships"]["friends"])}
    return elapsed, len(raw), counts


@register("social_ready", setup=_social_setup, metrics=True,
          description=f"IDENTIFY -> READY of a user with {GUILDS} guilds, {CONVERSATIONS} conversations and "
                      f"{FRIENDS} friends (one at a time); server CPU per READY and the server's own "
                      "IDENTIFY -> READY time (meadhall_gateway_ready_seconds) reported beside it")
async def social_ready(ctx: Context) -> Samples:
    me = ctx.shared["social_ready_user"]
    samples = Samples()
    sizes: list[int] = []
    counts: dict[str, int] = {}
    # A READY per connection; the per-user connection cap (10) is respected because each closes at once.
    n = min(ctx.requests, 200)
    pid = ctx.server.pid
    timed0 = await _histogram(ctx, READY_SECONDS)
    cpu0 = sum(server_times(pid))
    phase = time.perf_counter()
    for _ in range(n):
        try:
            elapsed, size, counts = await _ready_once(ctx, me)
        except Exception as exc:  # one counted error
            samples.error(str(exc)[:200] or type(exc).__name__)
            continue
        samples.latencies.append(elapsed)
        sizes.append(size)
    samples.wall_s = time.perf_counter() - phase
    server_cpu = sum(server_times(pid)) - cpu0
    timed = _since(timed0, await _histogram(ctx, READY_SECONDS))
    if counts and (counts["guilds"] < GUILDS or counts["dm_channels"] < CONVERSATIONS or counts["friends"] < FRIENDS):
        samples.error(f"READY lists too short: {counts}")
    samples.figures["server_cpu_ms_per_ready"] = round(server_cpu * 1000 / max(1, len(samples.latencies)), 3)
    if timed is not None and timed[2] > 0:
        samples.figures["server_ms_mean"] = round(timed[1] * 1000 / timed[2], 3)
    progress(f"social_ready: {len(samples.latencies)} READY frames of {sizes[-1] if sizes else 0} bytes "
             f"({counts}); server CPU {server_cpu * 1000 / max(1, len(samples.latencies)):.1f} ms per READY "
             f"(handshake included); p50 {ms(percentile(sorted(samples.latencies), 50))} ms")
    progress("social_ready: " + _server_side(timed, "IDENTIFY received -> READY handed to the connection"))
    return samples


# ---- the conversation list --------------------------------------------------------------------------


DM_LIST = "/api/v1/users/@me/channels"


@register("social_dm_list", setup=_social_setup, metrics=True,
          description=f"GET /users/@me/channels of a user with {CONVERSATIONS} conversations, one at a time; "
                      "the server's own latency of the route (meadhall_http_request_duration_seconds) beside it")
async def social_dm_list(ctx: Context) -> Samples:
    me = ctx.shared["social_ready_user"]
    labels = {"method": "GET", "route": DM_LIST, "status": "200"}
    timed0 = await _histogram(ctx, REQUEST_SECONDS, **labels)
    async with ctx.http_pool(1) as http:

        async def op(_: int) -> None:
            resp = expect(await http.get(DM_LIST, headers=_auth(me)), 200)
            if len(resp.json()["channels"]) < CONVERSATIONS:
                raise OpError("conversation list too short")

        samples = await ctx.drive(op, concurrency=1)
    timed = _since(timed0, await _histogram(ctx, REQUEST_SECONDS, **labels))
    progress("social_dm_list: " + _server_side(timed, f"GET {DM_LIST}", within=0.01))
    return samples


# ---- presence to 1,000 friends ----------------------------------------------------------------------


class PresenceGateway(LeanGateway):
    """Reads PRESENCE_UPDATE (by the custom status it carries) as LeanGateway reads MESSAGE_CREATE (by nonce)."""

    def _text(self, payload: bytes, now: float) -> None:
        if payload.startswith(b'{"op":0,') and payload.endswith(b'"t":"PRESENCE_UPDATE"}'):
            t_at = payload.rfind(b',"t":"')
            s = int(payload[payload.rfind(b'"s":', 0, t_at) + 4:t_at])
            if s != self.last_s + 1:
                self.gaps += 1
            self.last_s = s
            at = payload.find(b'"custom_status":"')
            tracker = self.tracker
            if tracker is not None and at >= 0:
                at += 17
                if tracker.arrive(payload[at:payload.find(b'"', at)], now) is not None:
                    self.got += 1
            return
        super()._text(payload, now)


async def _presence_setup(ctx: Context) -> None:
    await _social_setup(ctx)
    friends = ctx.shared["social_users"][1:FRIENDS + 1]
    # The comparison room is owned and written by a friend, and the user whose status changes is not in it: a
    # profile change also reaches the members of the user's own guilds (MEMBER_UPDATE), which would
    # otherwise land on the same connections and be counted against presence.
    await guild_with_members(ctx, "social_presence_room", friends[0], friends[1:], "Presence comparison")


async def _friends_only_setup(ctx: Context) -> None:
    await _presence_setup(ctx)
    if "social_friends_only_user" in ctx.shared:
        return
    users = ctx.shared["social_users"]
    solo, friends = users[FRIENDS + 1], users[1:FRIENDS + 1]
    started = time.perf_counter()
    async with ctx.http_pool(SETUP_CONCURRENCY) as http:
        await _befriend_all(ctx, http, solo, friends, "friendships of the friends-only user")
    progress(f"social: a second user with the same {len(friends)} friends and no guild in "
             f"{time.perf_counter() - started:.1f} s")
    ctx.shared["social_friends_only_user"] = solo


async def _closed_loop(fleet: Fleet, tracker: Tracker, n: int, act: Any, samples: Samples, what: str) -> float:
    """Run `act(i, nonce)` n times, each waiting for every receiver; returns the phase's wall seconds."""
    phase = time.perf_counter()
    for i in range(n):
        nonce = f"{what}{secrets.token_hex(4)}n{i}"
        start = time.perf_counter()
        sent = tracker.expect(nonce, i, start, future=True)
        try:
            await act(i, nonce)
            assert sent.done is not None
            await asyncio.wait_for(sent.done, 5.0)
        except TimeoutError:
            samples.error(f"{what} {i}: {sent.count}/{tracker.receivers} receivers within 5 s")
            continue
        except Exception as exc:  # one counted error
            samples.error(str(exc)[:200] or type(exc).__name__)
            continue
        samples.latencies.append(sent.last - start)
    return time.perf_counter() - phase


@register("social_presence_1000", setup=_presence_setup,
          description=f"custom-status changes of a user with {FRIENDS} friends on the gateway (and {GUILDS} guilds, "
                      f"each change a MEMBER_UPDATE in every one), one at a time; latency = PATCH start -> "
                      "PRESENCE_UPDATE read by the last friend; then the same connections receive room messages, "
                      "for the server CPU per delivery of both")
async def social_presence_1000(ctx: Context) -> Samples:
    users = ctx.shared["social_users"]
    return await _presence_against_room(ctx, "social_presence_1000", users[0])


@register("social_presence_friends_only", setup=_friends_only_setup,
          description=f"as social_presence_1000, for a user with the same {FRIENDS} friends and no guild: the status "
                      "change is presence alone")
async def social_presence_friends_only(ctx: Context) -> Samples:
    return await _presence_against_room(ctx, "social_presence_friends_only", ctx.shared["social_friends_only_user"])


async def _presence_against_room(ctx: Context, name: str, me: dict[str, Any]) -> Samples:
    """`me` changes their custom status, one change at a time, while the 1,000 friends are on the gateway; the
    room phase sends messages to the same connections; the two alternate in blocks."""
    friends = ctx.shared["social_users"][1:FRIENDS + 1]
    room = ctx.shared["social_presence_room"]
    fleet = Fleet(ctx.server, friends, "social_presence", ctx.shared, conn_class=PresenceGateway)
    rss0 = snapshot(ctx.server.pid).rss_kib
    await fleet.connect()
    samples, room_samples = Samples(), Samples()
    n = min(ctx.requests, 300)
    try:
        async with ctx.http_pool(1) as http:

            async def change_status(_: int, nonce: str) -> None:
                expect(await http.patch("/api/v1/users/@me", json={"custom_status": nonce}, headers=_auth(me)), 200)

            async def send(_: int, nonce: str) -> None:
                expect(await http.post(f"/api/v1/channels/{room}/messages",
                                       json={"content": "comparison", "nonce": nonce}, headers=_auth(friends[0])),
                       201)

            # The phases alternate in blocks, each after Fleet.quiet: whatever drifts during a run (the machine's
            # speed, the buffers growing, a background job) falls on both alike, where two long phases one after
            # the other made the ratio swing by 20% from run to run.
            totals = {"presence": [0.0, 0.0, 0], "room": [0.0, 0.0, 0]}
            per_block = max(1, n // COMPARISON_BLOCKS)
            for _ in range(COMPARISON_BLOCKS):
                for what, act, into in (("presence", change_status, samples), ("room", send, room_samples)):
                    tracker = Tracker(len(friends))
                    fleet.track(tracker)
                    await fleet.quiet()
                    cpu0 = sum(server_times(ctx.server.pid))
                    wall = await _closed_loop(fleet, tracker, per_block, act, into, what)
                    total = totals[what]
                    total[0] += wall
                    total[1] += sum(server_times(ctx.server.pid)) - cpu0
                    total[2] += sum(s.count for s in tracker.messages.values())
            samples.wall_s = totals["presence"][0]
            for what, into in (("presence", samples), ("room", room_samples)):
                _, server_cpu, deliveries = totals[what]
                latencies = sorted(into.latencies)
                progress(f"{name} {what}: {len(latencies)}/{per_block * COMPARISON_BLOCKS} complete, "
                         f"{deliveries} deliveries; last receiver p50 {ms(percentile(latencies, 50))} ms, p99 "
                         f"{ms(percentile(latencies, 99))} ms; server CPU "
                         f"{server_cpu * 1e6 / max(1, deliveries):.1f} us per delivery")
    finally:
        await fleet.close()
    rss1 = snapshot(ctx.server.pid).rss_kib
    p_cpu = totals["presence"][1] / max(1, totals["presence"][2])
    r_cpu = totals["room"][1] / max(1, totals["room"][2])
    progress(f"{name}: presence {p_cpu * 1e6:.1f} us vs room fan-out {r_cpu * 1e6:.1f} us of server "
             f"CPU per delivery (ratio {p_cpu / (r_cpu or 1):.2f}); server RSS {mib(rss0)} -> {mib(rss1)} MiB")
    if room_samples.errors:
        samples.error(f"room comparison phase: {room_samples.errors} errors ({room_samples.error_examples[:1]})")
    return samples
