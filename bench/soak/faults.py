"""The soak run's faults: the schedule (`kind[@node]:seconds,...`, parse_faults) and how each is made (inject):
a node killed or stopped with SIGTERM and restarted, Redis or PostgreSQL down for a while, the SQLite disk full.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.harness import mib, snapshot
from bench.soak import say
from bench.soak.infra import PostgresProxy, PrivatePostgres

if TYPE_CHECKING:
    from bench.soak.run import Soak

# Both node faults on node 1, so that node 0 runs the whole soak and its memory growth can be judged.
FULL_FAULTS = "kill@1:60,term@1:180,redis:300,postgres:420"
SHORT_FAULTS = "kill:20,redis:50"
GRACE = 5.0  # seconds after a fault's recovery still counted inside its window


@dataclass
class Fault:
    kind: str  # kill | term | redis | postgres | disk
    at: float  # seconds after the sending starts
    node: int | None = None
    started: float = 0.0  # monotonic
    returned: float = 0.0  # the node / service is back (monotonic)
    ended: float = 0.0  # returned + GRACE
    notes: dict[str, Any] = field(default_factory=dict)

    def covers(self, t: float) -> bool:
        return bool(self.started) and self.started <= t <= (self.ended or math.inf)


def parse_faults(spec: str, nodes: int, sqlite: bool) -> list[Fault]:
    """`kind[@node]:seconds,...`, e.g. `kill:20,redis:50` or `term@0:80`."""
    faults: list[Fault] = []
    for n, part in enumerate(p.strip() for p in spec.split(",") if p.strip()):
        head, _, at = part.partition(":")
        kind, _, node = head.partition("@")
        if kind not in ("kill", "term", "redis", "postgres", "disk") or not at:
            raise SystemExit(f"bad fault {part!r}: kind[@node]:seconds with kind kill|term|redis|postgres|disk")
        if sqlite and kind in ("redis", "postgres"):
            raise SystemExit(f"fault {kind} needs PostgreSQL + Redis (not --sqlite)")
        if not sqlite and kind == "disk":
            raise SystemExit("fault disk is for the SQLite variant (--sqlite)")
        target = int(node) if node else (n + 1) % nodes
        faults.append(Fault(kind, float(at), target if kind in ("kill", "term") else None))
    return sorted(faults, key=lambda f: f.at)


async def inject(soak: Soak, fault: Fault, t0: float) -> None:
    """Wait for the fault's time, make it, and note when the node or service was back."""
    await asyncio.sleep(max(0.0, t0 + fault.at - time.monotonic()))
    fault.started = time.monotonic()
    say(f"fault {fault.kind}" + (f" node {fault.node}" if fault.node is not None else "") +
        f" at {fault.at:g} s")
    try:
        if fault.kind in ("kill", "term"):
            await _node_fault(soak, fault)
        elif fault.kind == "redis":
            assert soak.redis is not None
            soak.redis.kill()
            await asyncio.sleep(soak.args.redis_down)
            await asyncio.to_thread(soak.redis.start)
        elif fault.kind == "postgres":
            await _postgres_fault(soak)
        elif fault.kind == "disk":
            assert soak.disk is not None
            fault.notes["ballast_mib"] = mib(await asyncio.to_thread(soak.disk.fill) / 1024)
            await asyncio.sleep(soak.args.disk_hold)
            soak.disk.free()
    except Exception as exc:  # the run goes on; the fault is reported as not made
        fault.notes["error"] = f"{type(exc).__name__}: {exc}"[:300]
        say(f"fault {fault.kind} failed: {fault.notes['error']}")
    fault.returned = time.monotonic()
    fault.ended = fault.returned + GRACE
    say(f"fault {fault.kind} over after {fault.returned - fault.started:.1f} s")


async def _node_fault(soak: Soak, fault: Fault) -> None:
    assert fault.node is not None
    node = soak.nodes[fault.node]
    assert node.proc is not None
    pid = node.pid
    fault.notes["rss_before_mib"] = mib(snapshot(pid).rss_kib)
    if fault.kind == "kill":
        os.killpg(pid, signal.SIGKILL)
        await asyncio.to_thread(node.proc.wait)
        await asyncio.sleep(soak.args.kill_down)
    else:
        node.proc.send_signal(signal.SIGTERM)
        began = time.monotonic()
        try:
            code = await asyncio.to_thread(node.proc.wait, 30)
        except subprocess.TimeoutExpired:
            os.killpg(pid, signal.SIGKILL)
            code = await asyncio.to_thread(node.proc.wait)
            fault.notes["killed_after_30s"] = True
        fault.notes["exit_s"] = round(time.monotonic() - began, 2)
        fault.notes["exit_code"] = code
    soak.restarted.add(fault.node)
    node.exit_code = None
    node.start()
    await node.wait_ready(120)
    fault.notes["restart_s"] = round(node.startup_s, 2)


async def _postgres_fault(soak: Soak) -> None:
    if isinstance(soak.pg, PrivatePostgres):
        await asyncio.to_thread(soak.pg.pg_stop)
        await asyncio.sleep(soak.args.postgres_down)
        await asyncio.to_thread(soak.pg.pg_start)
    elif isinstance(soak.pg, PostgresProxy):
        await soak.pg.cut()
        await asyncio.sleep(soak.args.postgres_down)
        await soak.pg.restore()
