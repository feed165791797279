"""Multi-node workloads (`python -m bench --nodes 2 --database-url ... --redis-url ...`, docs/scaling.md):
what PostgreSQL, the Redis bus and heartbeats cost when identical nodes share one database and one Redis.
On a single node they skip.

- `nodes_send`: 16 senders post into one room, each through a node of its own (sender i on node i mod N);
  no gateway receivers. Figures: messages per core-second of all nodes, and Redis's and PostgreSQL's CPU
  per message.
- `nodes_bus`: the same, all senders through node 0. Figure: the CPU each other node spends per message
  on reading its events from the bus when none of its connections receives them.
- `nodes_fanout`: NODES_RECEIVERS users (default 200) hold one gateway connection each, spread evenly over
  the nodes; 4 senders post through node 0 alone at NODES_RATE messages/s (default 25, open loop). Every
  receiver must read every message once, in order. Figures: deliveries per second and per core-second of
  all nodes, latency from the POST to the last receiver of each node, the bus lag p99 of each node (its
  `meadhall_bus_lag_seconds` histogram: the nodes run with METRICS_ENABLED), Redis's and PostgreSQL's CPU.
- `nodes_heartbeat`: the same receivers, idle; a quiet phase without frames, then every connection sends a
  HEARTBEAT once a second (half the frame limit of 120 a minute). Figures: CPU per heartbeat of the nodes
  (the heartbeat phase's CPU minus the quiet phase's, per heartbeat) and of Redis, and the round trip.

Each workload measures its own load phase (after the connections are open and the nodes idle) and returns
the figures with its samples; the harness adds them to the run's JSON as `figures`.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.drivers import Context, HttpPool, OpError, Samples, Skip
from bench.gateway_client import LeanGateway, Tracker
from bench.gateway_fleet import Fleet, guild_with_members, probe_gateway
from bench.harness import ServerProcess, SharedServices, ms, percentile, rnd, snapshot
from bench.workloads import register

SENDERS = 16
FANOUT_SENDERS = 4
RECEIVERS = int(os.environ.get("NODES_RECEIVERS", "200"))
DEFAULT_RATE = 25.0  # messages/s: 5,000 deliveries/s with 200 receivers
HEARTBEATS_PER_S = 1.0  # per connection; the server closes a connection above 120 frames a minute (4008)
QUIET_LIMIT_S = 5.0  # the quiet phase of nodes_heartbeat lasts as long as the heartbeats, at most this
DELIVERY_WAIT = 10.0
USERS = SENDERS + FANOUT_SENDERS + RECEIVERS


def _auth(user: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {user['token']}"}


def _rate() -> float:
    return float(os.environ.get("NODES_RATE", DEFAULT_RATE))


def nodes_of(ctx: Context) -> list[ServerProcess]:
    nodes = list(ctx.shared.get("nodes") or [])
    if len(nodes) < 2:
        raise Skip("skipped: needs two nodes or more (--nodes 2 --database-url ... --redis-url ...)")
    return nodes


@dataclass
class NodeSamples(Samples):
    """Samples with the figures of the workload's own measured phase."""

    figures: dict[str, Any] = field(default_factory=dict)


class Meter:
    """CPU of each node, of Redis and of the database's PostgreSQL backends over one phase."""

    def __init__(self, ctx: Context, nodes: list[ServerProcess]) -> None:
        self.nodes = nodes
        self.services = SharedServices(ctx.env.get("REDIS_URL"), ctx.env.get("DATABASE_URL"))
        self._cpu0: list[float] = []
        self._t0 = 0.0

    def start(self) -> None:
        self.services.start()
        self._cpu0 = [snapshot(node.pid).cpu_s for node in self.nodes]
        self._t0 = time.perf_counter()

    def stop(self) -> dict[str, Any]:
        wall = time.perf_counter() - self._t0
        cpu = [snapshot(node.pid).cpu_s - c0 for node, c0 in zip(self.nodes, self._cpu0, strict=True)]
        shared = self.services.stop()
        return {"phase_s": rnd(wall), "nodes_cpu_s": rnd(sum(cpu)), "node_cpu_s": [rnd(c) for c in cpu],
                **shared}


def per(value: float | None, count: int, scale: float) -> float | None:
    """`value` per item (times `scale`: 1e3 for ms, 1e6 for µs), None without items or value."""
    return rnd(value * scale / count) if value is not None and count else None


# ---- the bus lag histogram of a node's /metrics ------------------------------------------------------

_BUCKET = re.compile(r'^meadhall_bus_lag_seconds_bucket\{le="([^"]+)"\} ([0-9.e+]+)$', re.MULTILINE)


async def bus_lag_buckets(node: ServerProcess) -> dict[float, float]:
    """Cumulative counts of `meadhall_bus_lag_seconds` by upper bound; empty without METRICS_ENABLED."""
    async with httpx.AsyncClient(base_url=node.base_url, timeout=10.0, trust_env=False) as client:
        resp = await client.get("/metrics")
    if resp.status_code != 200:
        return {}
    return {float(le): float(n) for le, n in _BUCKET.findall(resp.text)}


def histogram_quantile(before: dict[float, float], after: dict[float, float], q: float) -> dict[str, Any]:
    """The q-quantile of what a histogram observed between two scrapes, as Prometheus's
    histogram_quantile computes it (linear within the bucket), with the bucket's upper bound and count."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0.0
    if not total:
        return {"observed": 0}
    rank = total * q
    lower, below = 0.0, 0.0
    for bound, cumulative in zip(bounds, counts, strict=True):
        if cumulative >= rank:
            if bound == float("inf"):
                return {"observed": int(total), "value_ms": None, "bucket_ms": f"> {ms(lower)}"}
            inside = (rank - below) / (cumulative - below) if cumulative > below else 1.0
            return {"observed": int(total), "value_ms": ms(lower + (bound - lower) * inside),
                    "bucket_ms": f"{ms(lower)}-{ms(bound)}"}
        lower, below = bound, cumulative
    return {"observed": int(total)}


# ---- nodes_send ----------------------------------------------------------------------------------


async def _send_setup(ctx: Context) -> None:
    nodes_of(ctx)
    users = ctx.users()[:SENDERS]
    await guild_with_members(ctx, "nodes_send_room", users[0], users[1:], "Nodes hall")


async def _send(ctx: Context, name: str, *, spread: bool) -> Samples:
    """`SENDERS` users post into one room: through node i mod N each (`spread`), else all through node 0."""
    nodes = nodes_of(ctx)
    users = ctx.users()[:SENDERS]
    room = ctx.shared["nodes_send_room"]
    through = nodes if spread else nodes[:1]
    pools = [HttpPool(node.base_url, max(1, SENDERS // len(through))) for node in through]
    meter = Meter(ctx, nodes)
    try:

        async def op(i: int) -> None:
            user = users[i % SENDERS]
            resp = await pools[(i % SENDERS) % len(pools)].post(
                f"/api/v1/channels/{room}/messages", json={"content": f"hello {i} from {user['username']}"},
                headers=_auth(user))
            if resp.status_code != 201:
                raise OpError(f"send: HTTP {resp.status_code} {resp.text[:120]}")

        meter.start()
        drove = await ctx.drive(op, concurrency=SENDERS)
        cost = meter.stop()
    finally:
        await asyncio.gather(*(pool.aclose() for pool in pools))
    sent = len(drove.latencies)
    samples = NodeSamples(latencies=drove.latencies, errors=drove.errors, error_examples=drove.error_examples,
                          wall_s=drove.wall_s)
    samples.figures = {
        **cost, "messages": sent,
        "messages_per_s": rnd(sent / drove.wall_s, 1) if drove.wall_s else None,
        "messages_per_core_s": rnd(sent / cost["nodes_cpu_s"], 1) if cost["nodes_cpu_s"] else None,
        "nodes_cpu_ms_per_message": per(cost["nodes_cpu_s"], sent, 1e3),
        "redis_cpu_ms_per_message": per(cost["redis_cpu_s"], sent, 1e3),
        "postgres_cpu_ms_per_message": per(cost["postgres_cpu_s"], sent, 1e3),
    }
    f = samples.figures
    if not spread:
        # The other nodes only read the messages' events from the bus, for no connection of theirs.
        others = cost["node_cpu_s"][1:]
        f["sending_node_cpu_ms_per_message"] = per(cost["node_cpu_s"][0], sent, 1e3)
        f["other_node_cpu_us_per_message"] = per(sum(others) / len(others), sent, 1e6)
    print(f"bench: {name}: {sent} messages in {drove.wall_s:.2f} s, nodes cpu {f['nodes_cpu_s']} s "
          f"{f['node_cpu_s']} ({f['nodes_cpu_ms_per_message']} ms/message, {f['messages_per_core_s']} messages "
          f"per core-second), redis {f['redis_cpu_ms_per_message']} ms/message, postgres "
          f"{f['postgres_cpu_ms_per_message']} ms/message"
          + ("" if spread else f"; every other node {f['other_node_cpu_us_per_message']} us/message"),
          file=sys.stderr, flush=True)
    return samples


@register("nodes_send", setup=_send_setup, needs_users=USERS,
          description=f"POST /channels/{{id}}/messages, {SENDERS} senders into one room, sender i through node "
                      "i mod N (needs --nodes 2+); figures: messages per core-second of all nodes, Redis and "
                      "PostgreSQL CPU per message")
async def nodes_send(ctx: Context) -> Samples:
    return await _send(ctx, "nodes_send", spread=True)


@register("nodes_bus", setup=_send_setup, needs_users=USERS,
          description=f"as nodes_send, all {SENDERS} senders through node 0: the other nodes only read the "
                      "events from the bus (no connection of theirs receives them); figure: their CPU per "
                      "message (needs --nodes 2+)")
async def nodes_bus(ctx: Context) -> Samples:
    return await _send(ctx, "nodes_bus", spread=False)


# ---- receivers spread over the nodes ---------------------------------------------------------------


def _fanout_users(ctx: Context) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    users = ctx.users()
    start = SENDERS
    senders = users[start:start + FANOUT_SENDERS]
    receivers = users[start + FANOUT_SENDERS:start + FANOUT_SENDERS + RECEIVERS]
    if len(receivers) < RECEIVERS:
        raise Skip(f"skipped: {len(receivers)} receivers prepared, {RECEIVERS} wanted")
    return senders, receivers


def _fleets(ctx: Context, nodes: list[ServerProcess], receivers: list[dict[str, Any]],
            conn_class: type[LeanGateway] = LeanGateway) -> list[Fleet]:
    """One fleet per node, receiver j on node j mod N. Both workloads name the fleets alike, so that the
    heartbeat workload RESUMEs the fan-out's gateway sessions rather than leaving them detached (a
    detached session still has every event appended to its resume buffer, which the fan-out would pay)."""
    return [Fleet(node, receivers[i::len(nodes)], f"nodes:{i}", ctx.shared, conn_class)
            for i, node in enumerate(nodes)]


async def _connect(fleets: list[Fleet]) -> float:
    started = time.perf_counter()
    try:
        for fleet in fleets:
            await fleet.connect()
        await asyncio.gather(*(fleet.quiet() for fleet in fleets))
    except BaseException:
        await asyncio.gather(*(fleet.close() for fleet in fleets))
        raise
    return time.perf_counter() - started


async def _fanout_setup(ctx: Context) -> None:
    nodes = nodes_of(ctx)
    senders, receivers = _fanout_users(ctx)
    for node in nodes:
        probe = Context(node, requests=1, concurrency=1, shared=ctx.shared)
        await probe_gateway(probe, receivers[0])
    await guild_with_members(ctx, "nodes_fanout_room", senders[0], [*senders[1:], *receivers], "Nodes fan-out")


@register("nodes_fanout", setup=_fanout_setup, needs_users=USERS, metrics=True,
          description=f"{RECEIVERS} (NODES_RECEIVERS) gateway receivers spread over the nodes, {FANOUT_SENDERS} "
                      "senders through node 0 at NODES_RATE msg/s (default 25, open loop); latency = POST start "
                      "-> read by the last receiver; figures: deliveries per core-second of all nodes, bus lag "
                      "p99 per node, Redis and PostgreSQL CPU (needs --nodes 2+)")
async def nodes_fanout(ctx: Context) -> Samples:
    nodes = nodes_of(ctx)
    senders, receivers = _fanout_users(ctx)
    room = ctx.shared["nodes_fanout_room"]
    run = ctx.shared["nodes_fanout_run"] = ctx.shared.get("nodes_fanout_run", 0) + 1
    rate = _rate()
    fleets = _fleets(ctx, nodes, receivers)
    connect_s = await _connect(fleets)
    trackers = [Tracker(len(fleet.conns)) for fleet in fleets]
    for fleet, tracker in zip(fleets, trackers, strict=True):
        fleet.track(tracker)
    samples = NodeSamples()
    meter = Meter(ctx, nodes)
    try:
        lag0 = [await bus_lag_buckets(node) for node in nodes]
        async with HttpPool(nodes[0].base_url, FANOUT_SENDERS * 2) as http:

            async def send(i: int) -> None:
                nonce = f"n{run}m{i}"
                start = time.perf_counter()
                for tracker in trackers:
                    tracker.expect(nonce, i, start, future=False)
                try:
                    resp = await http.post(f"/api/v1/channels/{room}/messages",
                                           json={"content": f"nodes message {i}", "nonce": nonce},
                                           headers=_auth(senders[i % len(senders)]))
                except Exception as exc:  # an HTTP failure: one counted error
                    samples.error(str(exc)[:200] or type(exc).__name__)
                    return
                if resp.status_code != 201:
                    samples.error(f"send: HTTP {resp.status_code} {resp.text[:120]}")

            meter.start()
            phase = time.perf_counter()
            tasks: list[asyncio.Task[None]] = []
            for i in range(ctx.requests):
                delay = phase + i / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(send(i)))
            await asyncio.gather(*tasks)
            for _ in range(int(DELIVERY_WAIT / 0.05)):  # polled: the arrivals are counted in the protocols
                if all(len(t.complete()) == len(t.messages) for t in trackers):
                    break
                await asyncio.sleep(0.05)
            cost = meter.stop()
        lag1 = [await bus_lag_buckets(node) for node in nodes]
        checks = [fleet.check(tracker) for fleet, tracker in zip(fleets, trackers, strict=True)]
    finally:
        await asyncio.gather(*(fleet.close() for fleet in fleets))
    last_read = max((s.last for t in trackers for s in t.messages.values() if s.count), default=phase)
    wall = last_read - phase
    deliveries = sum(check.deliveries for check in checks)
    for i, check in enumerate(checks):
        if not check.ok:
            samples.error(f"node {i} deliveries: {check.describe()}")
    # A message's latency: from its POST to the last receiver of any node.
    by_nonce: dict[bytes, float] = {}
    for tracker in trackers:
        for nonce, sent in tracker.messages.items():
            if sent.count >= tracker.receivers:
                by_nonce[nonce] = max(by_nonce.get(nonce, 0.0), sent.last - sent.start)
            else:
                by_nonce[nonce] = float("nan")
    samples.latencies = [v for v in by_nonce.values() if v == v]
    samples.wall_s = wall
    node_figures = []
    for i, tracker in enumerate(trackers):
        lat = sorted(s.last - s.start for s in tracker.complete())
        node_figures.append({
            "node": i, "receivers": tracker.receivers, "cpu_s": cost["node_cpu_s"][i],
            "last_receiver_p50_ms": ms(percentile(lat, 50)), "last_receiver_p99_ms": ms(percentile(lat, 99)),
            "bus_lag_p50": histogram_quantile(lag0[i], lag1[i], 0.50),
            "bus_lag_p99": histogram_quantile(lag0[i], lag1[i], 0.99),
        })
    samples.figures = {
        **cost, "rate_msg_s": rate, "messages": len(by_nonce), "deliveries": deliveries,
        "deliveries_per_s": rnd(deliveries / wall, 1) if wall > 0 else None,
        "deliveries_per_core_s": rnd(deliveries / cost["nodes_cpu_s"], 1) if cost["nodes_cpu_s"] else None,
        "nodes_cpu_us_per_delivery": per(cost["nodes_cpu_s"], deliveries, 1e6),
        "redis_cpu_us_per_delivery": per(cost["redis_cpu_s"], deliveries, 1e6),
        "postgres_cpu_ms_per_message": per(cost["postgres_cpu_s"], len(by_nonce), 1e3),
        "connect_s": rnd(connect_s), "nodes": node_figures,
    }
    f = samples.figures
    lags = "; ".join(f"node {n['node']}: last receiver p99 {n['last_receiver_p99_ms']} ms, bus lag p99 "
                     f"{n['bus_lag_p99'].get('value_ms')} ms ({n['bus_lag_p99'].get('bucket_ms')})"
                     for n in node_figures)
    print(f"bench: nodes_fanout pass {run}: {deliveries} deliveries in {wall:.2f} s = {f['deliveries_per_s']}/s, "
          f"nodes cpu {f['nodes_cpu_s']} s {f['node_cpu_s']} = {f['deliveries_per_core_s']} per core-second "
          f"({f['nodes_cpu_us_per_delivery']} us each), redis {f['redis_cpu_s']} s "
          f"({f['redis_cpu_us_per_delivery']} us/delivery), postgres {f['postgres_cpu_s']} s; {lags}",
          file=sys.stderr, flush=True)
    return samples


# ---- nodes_heartbeat -----------------------------------------------------------------------------


class TimedGateway(LeanGateway):
    """A LeanGateway that times each HEARTBEAT to its HEARTBEAT_ACK."""

    def __init__(self, user: dict[str, Any], host: str, port: int) -> None:
        super().__init__(user, host, port)
        self.pending: list[float] = []
        self.round_trips: list[float] = []

    def heartbeat(self) -> None:
        self.pending.append(time.perf_counter())
        super().heartbeat()

    def _text(self, payload: bytes, now: float) -> None:
        if payload.startswith(b'{"op":11') and self.pending:
            self.round_trips.append(now - self.pending.pop(0))
        super()._text(payload, now)


async def _heartbeat_setup(ctx: Context) -> None:
    nodes = nodes_of(ctx)
    _, receivers = _fanout_users(ctx)
    for node in nodes:
        await probe_gateway(Context(node, requests=1, concurrency=1, shared=ctx.shared), receivers[0])


@register("nodes_heartbeat", setup=_heartbeat_setup, needs_users=USERS,
          description=f"{RECEIVERS} (NODES_RECEIVERS) idle gateway connections spread over the nodes: a quiet "
                      f"phase, then one HEARTBEAT per connection per second (ops = heartbeats); figures: CPU "
                      "per heartbeat of the nodes (minus the quiet phase's) and of Redis (needs --nodes 2+)")
async def nodes_heartbeat(ctx: Context) -> Samples:
    nodes = nodes_of(ctx)
    _, receivers = _fanout_users(ctx)
    rounds = max(1, -(-ctx.requests // RECEIVERS))
    phase_s = rounds / HEARTBEATS_PER_S
    fleets = _fleets(ctx, nodes, receivers, TimedGateway)
    await _connect(fleets)
    conns = [conn for fleet in fleets for conn in fleet.conns]
    samples = NodeSamples()
    try:
        for fleet in fleets:  # no background heartbeats: this workload sends them itself
            if fleet._heartbeats is not None:
                fleet._heartbeats.cancel()
                fleet._heartbeats = None
        for conn in conns:
            if isinstance(conn, TimedGateway):
                conn.round_trips.clear()
        quiet = Meter(ctx, nodes)
        quiet.start()
        await asyncio.sleep(min(phase_s, QUIET_LIMIT_S))
        idle = quiet.stop()
        meter = Meter(ctx, nodes)
        meter.start()
        step = 1.0 / HEARTBEATS_PER_S / len(conns)
        started = time.perf_counter()
        for r in range(rounds):
            for j, conn in enumerate(conns):
                delay = started + r / HEARTBEATS_PER_S + j * step - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                conn.heartbeat()
        for _ in range(int(DELIVERY_WAIT / 0.02)):
            if not any(isinstance(c, TimedGateway) and c.pending and c.closed is None for c in conns):
                break
            await asyncio.sleep(0.02)
        busy = meter.stop()
        closed = [f"{c.user['username']}: {c.closed}" for c in conns if c.closed is not None]
        unanswered = sum(len(c.pending) for c in conns if isinstance(c, TimedGateway))
    finally:
        await asyncio.gather(*(fleet.close() for fleet in fleets))
    samples.latencies = [rt for c in conns if isinstance(c, TimedGateway) for rt in c.round_trips]
    samples.wall_s = busy["phase_s"]
    if closed:
        samples.error(f"{len(closed)} connections closed, e.g. {closed[0]}")
    if unanswered:
        samples.error(f"{unanswered} heartbeats without HEARTBEAT_ACK")
    beats = len(samples.latencies)

    def net(name: str) -> float | None:
        """The phase's CPU minus what the same time cost with the connections quiet."""
        if busy[name] is None or idle[name] is None or not idle["phase_s"]:
            return None
        return float(busy[name]) - float(idle[name]) * float(busy["phase_s"]) / float(idle["phase_s"])

    nodes_net = net("nodes_cpu_s")
    samples.figures = {
        "connections": len(conns), "heartbeats": beats, "heartbeats_per_s": rnd(beats / busy["phase_s"], 1),
        "quiet": idle, "heartbeating": busy,
        "nodes_cpu_us_per_heartbeat": per(nodes_net, beats, 1e6),
        "redis_cpu_us_per_heartbeat": per(net("redis_cpu_s"), beats, 1e6),
        "postgres_cpu_us_per_heartbeat": per(net("postgres_cpu_s"), beats, 1e6),
        "nodes_idle_cpu_per_connection_us_s": per(idle["nodes_cpu_s"], len(conns) * (idle["phase_s"] or 1), 1e6),
    }
    f = samples.figures
    print(f"bench: nodes_heartbeat: {beats} heartbeats from {len(conns)} connections in {busy['phase_s']} s; "
          f"nodes {f['nodes_cpu_us_per_heartbeat']} us, redis {f['redis_cpu_us_per_heartbeat']} us, postgres "
          f"{f['postgres_cpu_us_per_heartbeat']} us per heartbeat (quiet: nodes {idle['nodes_cpu_s']} s in "
          f"{idle['phase_s']} s); round trip p50 {ms(percentile(sorted(samples.latencies), 50))} ms",
          file=sys.stderr, flush=True)
    return samples
