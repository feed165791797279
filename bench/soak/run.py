"""`python -m bench.soak`: the soak and fault harness of issue 32 (docs/reliability.md).

Starts N `meadhall serve` nodes on PostgreSQL + a private Redis (or one node on SQLite), creates users with
`meadhall create-user` and guilds, rooms and memberships through HTTP, connects gateway clients spread
over the nodes, sends at a fixed total rate with nonces, injects the faults of the schedule, then checks
history and every client's record (bench/soak/verdict.py). Prints one line of figures; exits 1 when a
message was lost or doubled or another promise failed, 2 when the run could not be made.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import faulthandler
import json
import math
import os
import resource
import secrets
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.harness import ServerProcess, mib, run_cli, server_env, snapshot
from bench.soak import say
from bench.soak.client import GatewayClient, Latencies, Nodes, Senders, request
from bench.soak.faults import FULL_FAULTS, SHORT_FAULTS, inject, parse_faults
from bench.soak.infra import InfraError, PostgresProxy, PrivatePostgres, PrivateRedis, SmallDisk
from bench.soak.report import line, report
from bench.soak.verdict import HttpTally, Stored, judge, summary

SOAK_RATE = "1000000/60"  # every rate-limit bucket: never refuses, still evaluated (as bench/__main__.py)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true",
                        help="the CI run: 2 nodes, 60 connections, 10 senders at 30 msg/s for 75 s, a SIGKILL "
                             "and a Redis restart (later options override)")
    parser.add_argument("--sqlite", action="store_true", help="one node on SQLite (faults: kill, term, disk)")
    parser.add_argument("--nodes", type=int, help="meadhall serve processes (default 2; 1 with --sqlite)")
    parser.add_argument("--connections", type=int, help="gateway connections (default 1000)")
    parser.add_argument("--senders", type=int, help="users sending (default 200)")
    parser.add_argument("--users", type=int, help="users (default: max(senders, connections / 4))")
    parser.add_argument("--guilds", type=int, help="guilds; each user joins one (default: connections / 50)")
    parser.add_argument("--rooms", type=int, default=2, help="text rooms per guild (default 2)")
    parser.add_argument("--rate", type=float, help="messages per second in all (default 100)")
    parser.add_argument("--duration", type=float, help="seconds of sending (default 600)")
    parser.add_argument("--warmup", type=float, help="seconds before the warm memory reading (default 60)")
    parser.add_argument("--faults", help=f"schedule, kind[@node]:seconds,... (default {FULL_FAULTS}; "
                                         "'' for none); with --sqlite default disk at a third")
    parser.add_argument("--kill-down", type=float, default=10.0, help="seconds a killed node stays down")
    parser.add_argument("--redis-down", type=float, default=5.0, help="seconds Redis stays down")
    parser.add_argument("--postgres-down", type=float, default=5.0, help="seconds PostgreSQL stays down")
    parser.add_argument("--disk-hold", type=float, default=10.0, help="seconds the disk stays full")
    parser.add_argument("--disk-size", default="256m", help="the SQLite variant's tmpfs size")
    parser.add_argument("--postgres", choices=("private", "proxy"), default="private",
                        help="private: a cluster under /tmp restarted with pg_ctl (falls back to proxy when it "
                             "cannot start); proxy: a TCP proxy in front of --postgres-upstream that cuts "
                             "connections")
    parser.add_argument("--postgres-upstream", default="127.0.0.1:5432",
                        help="the PostgreSQL the proxy fronts (a soak_* database is made there and dropped)")
    parser.add_argument("--latency-budget-ms", type=float,
                        help="fail when the p99 delivery outside fault windows exceeds it (default 250 for "
                             "the full run, none with --short)")
    parser.add_argument("--memory-budget", type=float,
                        help="fail when a node's RSS grows more than this fraction after warm-up (default "
                             "0.10 when the run lasts 5 minutes or more)")
    parser.add_argument("--source", help="run the nodes from this checkout (PYTHONPATH), e.g. a git worktree")
    parser.add_argument("--json", help="write the figures and verdict to this file")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) after success")
    args = parser.parse_args(argv)
    short = args.short
    defaults = {"nodes": 1 if args.sqlite else 2, "connections": 60 if short else 1000,
                "senders": 10 if short else 200, "rate": 30.0 if short else 100.0,
                "duration": 75.0 if short else 600.0}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.users is None:
        args.users = max(args.senders, math.ceil(args.connections / (3 if short else 4)))
    if args.guilds is None:
        args.guilds = max(1, min(args.users, args.connections // 50))
    if args.faults is None:
        if args.sqlite:
            args.faults = f"disk:{args.duration / 3:.0f}"
        else:
            args.faults = SHORT_FAULTS if short else FULL_FAULTS
    if args.warmup is None:
        # Before the first fault: a reading of a node being killed says nothing.
        first = min((f.at for f in parse_faults(args.faults, args.nodes, args.sqlite)), default=math.inf)
        args.warmup = max(5.0, min(60.0, args.duration / 4, first - 5))
    if args.latency_budget_ms is None and not short:
        args.latency_budget_ms = 250.0
    if args.memory_budget is None and args.duration >= 300:
        args.memory_budget = 0.10
    if args.connections > args.users * 10:
        parser.error("at most 10 connections per user (the 11th closes the oldest with 4013)")
    if args.senders > args.users:
        parser.error("--senders must not exceed --users")
    return args


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.faults = parse_faults(args.faults, args.nodes, args.sqlite)
        self.work = Path(tempfile.mkdtemp(prefix="soak-"))
        self.run_tag = secrets.token_hex(3)
        self.nodes: list[ServerProcess] = []
        self.redis: PrivateRedis | None = None
        self.pg: PrivatePostgres | PostgresProxy | None = None
        self.disk: SmallDisk | None = None
        self.dropdb: str | None = None
        self.notes: list[str] = []
        self.restarted: set[int] = set()
        self.memory: dict[str, list[float | None]] = {}
        self.total = int(args.rate * args.duration)
        self.latencies = Latencies(self.total)
        self.tally = HttpTally()
        self.net: Nodes | None = None
        self.t0 = 0.0
        self.room_of: dict[int, str] = {}
        self.cpu: dict[str, Any] = {}
        self.lags: list[float] = []

    def in_window(self, t: float) -> bool:
        return any(f.covers(t) for f in self.faults)

    def fault_at(self, t: float) -> str | None:
        return next((f.kind for f in self.faults if f.covers(t)), None)

    # ---- infrastructure -------------------------------------------------------------------------------
    async def infra(self) -> tuple[Path, str | None, str | None]:
        data = self.work / "data"
        if self.args.sqlite:
            if any(f.kind == "disk" for f in self.faults):
                self.disk = SmallDisk(data, self.args.disk_size)
                why = self.disk.mount()
                if why:
                    self.notes.append(f"disk fault skipped: {why}")
                    say(f"disk fault skipped: {why}")
                    self.faults = [f for f in self.faults if f.kind != "disk"]
            data.mkdir(exist_ok=True)
            return data, None, None
        data.mkdir()
        self.redis = PrivateRedis(self.work)
        self.redis.start()
        database = f"soak_{self.run_tag}"
        if self.args.postgres == "private":
            pg = PrivatePostgres(self.work)
            try:
                await asyncio.to_thread(pg.start)
                await asyncio.to_thread(pg.create_database, database)
                self.pg = pg
            except (InfraError, OSError, subprocess.SubprocessError) as exc:
                self.notes.append(f"private PostgreSQL could not start ({exc}); a TCP proxy ran instead")
                say(self.notes[-1])
                await asyncio.to_thread(pg.stop)
        if self.pg is None:
            host, _, port = self.args.postgres_upstream.partition(":")
            proxy = PostgresProxy(host, int(port or 5432))
            done = await asyncio.to_thread(
                subprocess.run, ["psql", "-h", host, "-p", port or "5432", "-U", "postgres", "-qc",
                                 f'CREATE DATABASE "{database}"'], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise InfraError(f"CREATE DATABASE {database}: {done.stderr.strip()[:200]}")
            self.dropdb = database
            await proxy.restore()
            self.pg = proxy
        say(f"PostgreSQL: {self.pg.kind} on port {self.pg.port}; Redis: private on port {self.redis.port}")
        return data, self.pg.url(database), self.redis.url

    async def teardown(self) -> None:
        for node in self.nodes:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(node.stop, 15.0)
        if self.redis is not None:
            self.redis.stop()
        if isinstance(self.pg, PrivatePostgres):
            await asyncio.to_thread(self.pg.stop)
        elif isinstance(self.pg, PostgresProxy):
            await self.pg.cut()
        if self.dropdb:
            host, _, port = self.args.postgres_upstream.partition(":")
            await asyncio.to_thread(
                subprocess.run, ["psql", "-h", host, "-p", port or "5432", "-U", "postgres", "-qc",
                                 f'DROP DATABASE IF EXISTS "{self.dropdb}" WITH (FORCE)'], capture_output=True,
                check=False)
        if self.disk is not None:
            self.disk.free()

    # ---- nodes and setup ------------------------------------------------------------------------------
    async def start_nodes(self, data: Path, database_url: str | None, redis_url: str | None) -> list[dict[str, Any]]:
        env = server_env(data, database_url=database_url, redis_url=redis_url,
                         rate_limits=_rate_limits(), secret_key=secrets.token_urlsafe(48))
        if self.args.source:
            env["PYTHONPATH"] = self.args.source
        rc, out, err = await run_cli(env, "migrate", "--data-dir", str(data))
        if rc:
            raise InfraError(f"meadhall migrate failed: {(err or out)[-300:]}")
        sessions = self.work / "sessions.jsonl"
        started = time.monotonic()
        rc, out, err = await run_cli(env, "create-user", "--count", str(self.args.users), "--prefix",
                                     f"soak{self.run_tag}u", "--sessions", str(sessions), "--data-dir",
                                     str(data), limit=3600)
        if rc:
            raise InfraError(f"meadhall create-user failed: {(err or out)[-300:]}")
        users = [json.loads(line) for line in sessions.read_text().splitlines() if line.strip()]
        say(f"{len(users)} users created in {time.monotonic() - started:.0f} s")
        # Each node its own NODE_ID (1..N; the CLI above used 0): two with one id mint the same snowflakes.
        self.nodes = [ServerProcess(data, {**env, "NODE_ID": str(i + 1)}, self.work / f"node{i}.log")
                      for i in range(self.args.nodes)]
        for node in self.nodes:
            node.start()
        for node in self.nodes:
            await node.wait_ready(120)
        return users

    async def setup_guilds(self, http: httpx.AsyncClient, users: list[dict[str, Any]]) -> list[list[str]]:
        """Guild g: users u with u % guilds == g; its owner makes `rooms` text rooms and one invitation."""
        base = self.nodes[0].base_url
        guilds: list[list[str]] = []

        async def call(method: str, path: str, user: dict[str, Any], body: Any = None) -> dict[str, Any]:
            resp = await http.request(method, base + path, json=body,
                                      headers={"Authorization": f"Bearer {user['token']}"})
            if resp.status_code not in (200, 201):
                raise InfraError(f"setup {method} {path}: HTTP {resp.status_code} {resp.text[:200]}")
            return dict(resp.json())

        gate = asyncio.Semaphore(16)
        for g in range(self.args.guilds):
            owner = users[g]
            guild = (await call("POST", "/api/v1/guilds", owner, {"name": f"Soak {g}"}))["guild"]
            rooms = []
            for r in range(self.args.rooms):
                channel = await call("POST", f"/api/v1/guilds/{guild['id']}/channels", owner,
                                     {"name": f"soak-{r}", "type": "text"})
                rooms.append(str(channel["channel"]["id"]))
            code = (await call("POST", f"/api/v1/channels/{rooms[0]}/invites", owner,
                               {"max_uses": 0}))["invite"]["code"]

            async def join(user: dict[str, Any], code: str = code) -> None:
                async with gate:
                    await call("POST", f"/api/v1/invites/{code}", user)

            await asyncio.gather(*(join(u) for u in users[g + self.args.guilds::self.args.guilds]))
            guilds.append(rooms)
        return guilds

    async def newest(self, http: httpx.AsyncClient, user: dict[str, Any], room: str) -> int:
        resp = await http.get(f"{self.nodes[0].base_url}/api/v1/channels/{room}/messages?limit=1",
                              headers={"Authorization": f"Bearer {user['token']}"})
        messages = resp.json().get("messages", []) if resp.status_code == 200 else []
        return int(messages[0]["id"]) if messages else 0

    # ---- figures --------------------------------------------------------------------------------------
    def read_memory(self, label: str) -> None:
        for i, node in enumerate(self.nodes):
            alive = node.proc is not None and node.proc.poll() is None
            rss = snapshot(node.pid).rss_kib if alive else 0
            self.memory.setdefault(f"node{i}", []).append(mib(rss) if rss else None)
        say(f"memory {label}: " + ", ".join(f"{k} {v[-1]} MiB" for k, v in self.memory.items()))

    async def history(self, users: list[dict[str, Any]],
                      guilds: list[list[str]], net: Nodes) -> list[Stored]:
        """Every message of the run, read back room by room (newest first, `before` cursor)."""
        prefix = f"soak {self.run_tag}."
        stored: list[Stored] = []
        for g, rooms in enumerate(guilds):
            for room in rooms:
                before = ""
                while True:
                    resp, _ = await request(net, "GET",
                                            f"/api/v1/channels/{room}/messages?limit=100{before}",
                                            token=users[g]["token"], start=0, what="history", give_up=60)
                    if isinstance(resp, str) or resp.status_code != 200:
                        raise InfraError(f"history of room {room}: {resp if isinstance(resp, str) else resp.text}")
                    page = resp.json()
                    for m in page["messages"]:
                        content = m.get("content") or ""
                        if content.startswith(prefix):
                            stored.append(Stored(int(content[len(prefix):].split()[0]), int(m["id"]),
                                                 str(m["author"]["id"]), room))
                    if not page["messages"] or not page.get("has_more"):
                        break
                    before = f"&before={min(int(m['id']) for m in page['messages'])}"
        return stored

    def traces(self, clients: list[GatewayClient], verdict: Any, most: int = 5) -> dict[str, Any]:
        """The connection events of a few clients that missed or doubled a delivery (seconds since t0), and
        the messages they missed with when each send began and the id it got."""
        out: dict[str, Any] = {}
        for c in clients:
            missed = sorted(i for i in verdict.missed if self.room_of.get(i) in c.record.rooms
                            and not (c.record.dispatched[i] or c.record.filled[i]))
            doubled = [i for i, n in enumerate(c.record.dispatched) if n > 1]
            if (missed or doubled or c.record.ended) and len(out) < most:
                out[c.name] = {
                    "events": [f"{t - self.t0:.2f} {what}" for t, what in c.trace],
                    "missed": [f"{i} sent at {self.latencies.sent_at[i] - self.t0:.2f}" for i in missed[:10]],
                    "doubled": doubled[:10]}
        return out

    async def loop_lag(self) -> None:
        """How late a 0.1 s sleep of the harness wakes: a late loop reads deliveries late, and the latency
        figures then measure the harness (a starved or saturated process), not the nodes."""
        while True:
            began = time.monotonic()
            await asyncio.sleep(0.1)
            self.lags.append(time.monotonic() - began - 0.1)
            if len(self.lags) % 600 == 0:
                recent = sorted(self.lags[-600:])
                say(f"{len(self.lags) // 10} s: harness loop lag p99 {recent[int(len(recent) * 0.99)] * 1000:.0f} ms")

    def by_second(self, counts: dict[int, int]) -> dict[int, int]:
        """Missed deliveries by the second (since the sending began) their message's send began: where in
        the schedule they fall, against the faults' times."""
        seconds: dict[int, int] = {}
        for index, n in counts.items():
            second = int(self.latencies.sent_at[index] - self.t0)
            seconds[second] = seconds.get(second, 0) + n
        return dict(sorted(seconds.items()))

    def delivery_back(self, since: float) -> float | None:
        """Seconds from `since` to the first delivery of a message whose send began after it."""
        best = None
        sent_at, first_at = self.latencies.sent_at, self.latencies.first_at
        for i in range(self.total):
            if sent_at[i] >= since and first_at[i]:
                back = first_at[i] - since
                best = back if best is None or back < best else best
        return None if best is None else round(best, 2)

    # ---- the run --------------------------------------------------------------------------------------
    async def run(self) -> dict[str, Any]:
        args = self.args
        data, database_url, redis_url = await self.infra()
        users = await self.start_nodes(data, database_url, redis_url)
        limits = httpx.Limits(max_connections=400, max_keepalive_connections=100)
        timeout = httpx.Timeout(5.0, connect=2.0)
        async with httpx.AsyncClient(limits=limits, timeout=timeout, trust_env=False) as http:
            guilds = await self.setup_guilds(http, users)
            net = Nodes([n.base_url for n in self.nodes], self.in_window, self.fault_at, self.tally)
            net.open()
            newest = {room: await self.newest(http, users[g], room)
                      for g, rooms in enumerate(guilds) for room in rooms}
            clients = []
            for j in range(args.connections):
                u = j % args.users
                rooms = guilds[u % args.guilds]
                clients.append(GatewayClient(f"c{j}/u{u}", users[u], {r: newest[r] for r in rooms},
                                             j % args.nodes, net, self.run_tag, self.total, self.latencies))
            started = time.monotonic()
            for k, client in enumerate(clients):
                client.start()
                if k % 20 == 19:
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in clients)), 180)
            say(f"{len(clients)} connections ready in {time.monotonic() - started:.1f} s")
            self.read_memory("start")
            senders = Senders(users[:args.senders], lambda s: guilds[s % args.guilds], net, self.run_tag,
                              args.rate, self.total, self.latencies)
            lag = asyncio.create_task(self.loop_lag())
            cpu0 = _cpu_self()
            nodes_cpu0 = [snapshot(n.pid).cpu_s for n in self.nodes]
            t0 = time.monotonic()
            stop = asyncio.Event()
            send_task = asyncio.create_task(senders.run(stop))
            fault_tasks = [asyncio.create_task(inject(self, f, t0)) for f in self.faults]
            await asyncio.sleep(max(0.0, t0 + args.warmup - time.monotonic()))
            self.read_memory("after warm-up")
            await send_task
            await senders.drain()
            await asyncio.gather(*fault_tasks)
            sent_s = time.monotonic() - t0
            # The harness's own CPU: near a whole core, it is the bottleneck and the latencies measure it.
            self.cpu = {"harness_s": round(_cpu_self() - cpu0, 1),
                        "harness_core_share": round((_cpu_self() - cpu0) / sent_s, 2),
                        "nodes_s": [round(snapshot(n.pid).cpu_s - c, 1) for n, c in zip(self.nodes, nodes_cpu0,
                                                                                           strict=True)],
                        "loadavg": os.getloadavg()[0], "harness_loop_lag_ms": summary(self.lags)}
            lag.cancel()
            await self.settle(clients, senders)
            self.read_memory("end")
            stored = await self.history(users, guilds, net)
            end_ms = int(time.time() * 1000)
            for client in clients:
                client.record.covered_to_ms = end_ms
            for client in clients:
                await client.stop()
            verdict = judge(senders.sends, stored, [c.record for c in clients], self.tally)
            await net.close()
        self.t0 = t0
        self.room_of = {send.index: send.room for send in senders.sends}
        result = report(self, verdict, clients, senders, sent_s)
        result["traces"] = self.traces(clients, verdict)
        return result

    async def settle(self, clients: list[GatewayClient], senders: Senders, limit: float = 30.0) -> None:
        """Until every client is connected and holds every acknowledged message of its rooms (or `limit`)."""
        want: dict[str, list[int]] = {}
        for send in senders.sends:
            if send.acked_id is not None:
                want.setdefault(send.room, []).append(send.index)
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            pending = [c for c in clients if not c.ready.is_set() or c.fills or any(
                not (c.record.dispatched[i] or c.record.filled[i]) for r in c.record.rooms for i in want.get(r, ()))]
            if not pending:
                return
            await asyncio.sleep(0.5)
        say(f"settle: {len(pending)} clients still incomplete after {limit:.0f} s")


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _rate_limits() -> dict[str, str]:
    try:
        from meadhall.core.ratelimit import BUCKETS
    except ImportError:
        return {"global": SOAK_RATE}
    return {name: SOAK_RATE for name in BUCKETS}


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # SIGTERM as Ctrl-C: the run is cancelled and its teardown stops Redis and PostgreSQL, which outlive
    # the harness otherwise; SIGUSR1 prints every thread's stack (a run that seems stuck).
    signal.signal(signal.SIGTERM, _interrupt)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    soak = Soak(args)
    say(f"work directory {soak.work} (node logs, Redis log)")

    async def go() -> dict[str, Any]:
        try:
            return await soak.run()
        finally:
            await soak.teardown()

    try:
        result = asyncio.run(go())
    except (InfraError, OSError, subprocess.SubprocessError, TimeoutError) as exc:
        say(f"the run could not be made: {type(exc).__name__}: {exc}")
        say(f"logs kept in {soak.work}")
        return 2
    except KeyboardInterrupt:
        say(f"interrupted; logs kept in {soak.work}")
        return 130
    finally:
        if soak.disk is not None:
            check_sqlite(soak)
            soak.disk.unmount()
    if soak.disk is not None:
        result["sqlite_integrity"] = soak.notes[-1]
        if soak.notes[-1] != "ok":
            result["ok"] = False
            result["failures"].append(f"PRAGMA integrity_check: {soak.notes[-1]}")
    print(line(result), flush=True)
    for failure in result["failures"]:
        say(f"FAILED: {failure}")
    for example in result["examples"]:
        say(f"  e.g. {example}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    if result["ok"] and not args.keep:
        subprocess.run(["rm", "-rf", str(soak.work)], check=False)
    else:
        say(f"logs kept in {soak.work}")
    return 0 if result["ok"] else 1


def check_sqlite(soak: Soak) -> None:
    assert soak.disk is not None
    path = soak.disk.path / "chat.db"
    try:
        with contextlib.closing(sqlite3.connect(path)) as db:
            soak.notes.append(str(db.execute("PRAGMA integrity_check").fetchone()[0]))
    except sqlite3.Error as exc:
        soak.notes.append(f"integrity check failed: {exc}")
