"""Benchmark machinery: the server process, /proc sampling, the CLI runner and the statistics.

The server runs as a real `meadhall serve` process; its CPU time and memory are read from /proc
(utime + stime from /proc/<pid>/stat, VmRSS / VmHWM from /proc/<pid>/status), summed over the process
and its descendants, so that a multi-process server would be measured whole.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
KIB_PER_MIB = 1024


class ServerError(Exception):
    """The server did not start or become ready."""


# ---- /proc sampling ----------------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # comm (field 2) may contain spaces and parentheses: split after the last ")".
    return raw[raw.rfind(")") + 2:].split()


def descendants(pid: int) -> list[int]:
    """Live descendants of `pid` (children, grandchildren ...), found by scanning /proc for ppids."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    queue = list(children.get(pid, []))
    while queue:
        child = queue.pop()
        found.append(child)
        queue.extend(children.get(child, []))
    return found


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process plus cutime + cstime (children it has already reaped)."""
    fields = _stat_fields(pid)
    if not fields:
        return 0.0
    # After comm: state=0 ppid=1 ... utime=11 stime=12 cutime=13 cstime=14 (fields 14-17 of stat(5)).
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLOCK_TICKS


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in KiB; zeros when the process is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        pass
    return rss, hwm


@dataclass(frozen=True)
class ProcSnapshot:
    cpu_s: float  # cumulative CPU seconds of the process tree
    rss_kib: int  # current resident set, summed over the tree
    hwm_kib: int  # sum of each process's own lifetime peak (an upper bound of the tree's peak)
    processes: int


def snapshot(pid: int) -> ProcSnapshot:
    tree = [pid, *descendants(pid)]
    cpu = rss = hwm = 0.0
    for p in tree:
        cpu += cpu_seconds(p)
        r, h = memory_kib(p)
        rss += r
        hwm += h
    return ProcSnapshot(cpu, int(rss), int(hwm), len(tree))


class RssSampler:
    """A thread that samples the tree's VmRSS every `interval` s, so that peaks between snapshots show.

    A thread, not a task: a saturated event loop would delay the samples exactly when they matter."""

    def __init__(self, pid: int, interval: float = 0.02, tree_refresh: float = 0.5) -> None:
        self.pid = pid
        self.interval = interval
        self.tree_refresh = tree_refresh
        self.peak_kib = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def reset(self) -> None:
        self.peak_kib = 0
        self.samples = 0

    def _loop(self) -> None:
        tree = [self.pid]
        refreshed = 0.0
        while not self._stop.wait(self.interval):
            now = time.monotonic()
            if now - refreshed >= self.tree_refresh:
                tree = [self.pid, *descendants(self.pid)]
                refreshed = now
            total = sum(memory_kib(p)[0] for p in tree)
            self.peak_kib = max(self.peak_kib, total)
            self.samples += 1


# ---- the server process ------------------------------------------------------------------------------


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def meadhall_command() -> list[str]:
    """The `meadhall` console script beside this interpreter (the venv), else on PATH."""
    beside = Path(sys.executable).parent / "meadhall"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("meadhall")
    return [found] if found else [sys.executable, "-m", "meadhall.cli.main"]


def server_env(data_dir: Path, *, database_url: str | None, redis_url: str | None,
               rate_limits: dict[str, str], secret_key: str) -> dict[str, str]:
    env = dict(os.environ)
    # A stray DATABASE_URL / REDIS_URL in the caller's shell must not silently change the backend, nor a
    # METRICS_ENABLED the figures (a workload that reads /metrics asks for it: Workload.metrics).
    for name in ("DATABASE_URL", "REDIS_URL", "PUBLIC_URL", "TLS_ENABLED", "HOST", "PORT", "METRICS_ENABLED"):
        env.pop(name, None)
    env.update(
        DATA_DIR=str(data_dir),
        LOG_LEVEL="warning",
        RATE_LIMITS=json.dumps(rate_limits),
        SECRET_KEY=secret_key,
        PYTHONUNBUFFERED="1",
    )
    if database_url:
        env["DATABASE_URL"] = database_url
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the harness dies, even by SIGKILL (Linux prctl)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def cpu_list(spec: str) -> set[int]:
    """taskset's list syntax: "1", "0,2", "2-3"."""
    cpus: set[int] = set()
    for part in spec.split(","):
        low, _, high = part.strip().partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def pin_away_from(server_cpus: str) -> None:
    """Keep the load generator (this process) off the server's CPUs, when any other CPU is left."""
    others = os.sched_getaffinity(0) - cpu_list(server_cpus)
    if others:
        os.sched_setaffinity(0, others)


class ServerProcess:
    """`meadhall serve` on a loopback port, output to a log file, stopped with SIGTERM (then SIGKILL)."""

    def __init__(self, data_dir: Path, env: dict[str, str], log_path: Path, host: str = "127.0.0.1",
                 cpu: str | None = None) -> None:
        self.cpu = cpu  # pin the server to these CPUs with taskset (e.g. "1"), else unpinned
        self.data_dir = data_dir
        self.env = env
        self.log_path = log_path
        self.host = host
        self.port = free_port(host)
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.startup_s = 0.0
        self.exit_code: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def command(self) -> list[str]:
        pin = ["taskset", "-c", self.cpu] if self.cpu else []
        return [*pin, *meadhall_command(), "serve", "--host", self.host, "--port", str(self.port),
                "--data-dir", str(self.data_dir)]

    def start(self) -> None:
        log = open(self.log_path, "ab")  # the child keeps its own descriptor; ours closes after Popen
        try:
            # Own session: a Ctrl-C at the terminal reaches the harness, which then stops the server.
            self.proc = subprocess.Popen(self.command, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=_die_with_parent)
        finally:
            log.close()
        self.started_at = time.perf_counter()
        if self.cpu:
            pin_away_from(self.cpu)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    async def wait_ready(self, limit: float = 60.0) -> dict[str, Any]:
        """Poll /readyz until 200; fail early if the process exits."""
        assert self.proc is not None
        deadline = time.perf_counter() + limit
        last = "no answer"
        async with httpx.AsyncClient(base_url=self.base_url, timeout=2.0, trust_env=False) as client:
            while time.perf_counter() < deadline:
                if self.proc.poll() is not None:
                    raise ServerError(f"server exited with code {self.proc.returncode} before it was ready:\n"
                                      f"{self.log_tail()}")
                try:
                    resp = await client.get("/readyz")
                    if resp.status_code == 200:
                        self.startup_s = time.perf_counter() - self.started_at
                        return dict(resp.json())
                    last = f"HTTP {resp.status_code} {resp.text[:200]}"
                except httpx.TransportError as exc:
                    last = type(exc).__name__
                await asyncio.sleep(0.05)
        raise ServerError(f"server not ready after {limit:.0f} s (last: {last}):\n{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> int | None:
        if self.proc is None or self.exit_code is not None:
            return self.exit_code
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # uvicorn shuts down gracefully on SIGTERM
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.exit_code = self.proc.returncode
        return self.exit_code


async def run_cli(env: dict[str, str], *args: str, limit: float = 300.0) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *meadhall_command(), *args, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), limit)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return -1, "", f"timed out after {limit:.0f} s"
    return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


# ---- statistics ---------------------------------------------------------------------------------------


def percentile(sorted_values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default); `sorted_values` must be sorted."""
    if not sorted_values:
        return None
    k = (len(sorted_values) - 1) * q / 100
    lo = math.floor(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def median(values: list[float]) -> float | None:
    return percentile(sorted(values), 50)


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def mib(kib: float) -> float:
    return round(kib / KIB_PER_MIB, 1)


def rnd(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


# ---- several nodes, and the shared services they use (python -m bench --nodes N) -----------------------


def tree_snapshot(pids: list[int]) -> ProcSnapshot:
    """`snapshot` summed over several process trees (the nodes of a multi-node run)."""
    parts = [snapshot(pid) for pid in pids]
    return ProcSnapshot(sum(p.cpu_s for p in parts), sum(p.rss_kib for p in parts),
                        sum(p.hwm_kib for p in parts), sum(p.processes for p in parts))


def redis_cpu_seconds(url: str) -> float | None:
    """Redis's own CPU (`INFO cpu`: used_cpu_user + used_cpu_sys, main and I/O threads), or None when it
    cannot be read. Every client of that Redis is in the figure: on a shared Redis, others' load too."""
    try:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=2.0)
        try:
            info = client.info("cpu")
        finally:
            client.close()
    except Exception:  # a figure that cannot be read must not fail the measurement
        return None
    return float(info.get("used_cpu_user", 0.0)) + float(info.get("used_cpu_sys", 0.0))


def database_name(url: str | None) -> str | None:
    """The database of a PostgreSQL URL (`postgresql://user@host:port/NAME?...`)."""
    if not url or not url.startswith("postgres"):
        return None
    path = url.split("://", 1)[-1].split("/", 1)
    return path[1].split("?", 1)[0] or None if len(path) == 2 else None


class PostgresCpu:
    """CPU of the PostgreSQL backends serving one database, from /proc, on a PostgreSQL on this machine.

    pg_stat_statements needs `shared_preload_libraries` (a server restart), so the backends are found by
    their process title instead: "postgres: USER DATABASE HOST(PORT) STATE". A thread rescans every
    `interval` s and keeps the last CPU seen per backend, so one that exits between two scans loses at most
    that interval's CPU (the service's pool keeps its connections, so backends rarely exit). Shared work
    (WAL writer, checkpointer, autovacuum) is not in the figure."""

    def __init__(self, database: str, interval: float = 0.25) -> None:
        self.marker = f" {database} "
        self.interval = interval
        self._base: dict[int, float] = {}  # pid -> CPU at the first scan that saw it (0 if born after start)
        self._last: dict[int, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _backends(self) -> dict[int, float]:
        found: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    title = fh.read(200)
            except OSError:
                continue
            if title.startswith(b"postgres: ") and self.marker.encode() in title:
                found[int(entry)] = cpu_seconds(int(entry))
        return found

    def _scan(self, first: bool) -> None:
        seen = self._backends()
        with self._lock:
            for pid, cpu in seen.items():
                if pid not in self._base:
                    self._base[pid] = cpu if first else 0.0
                self._last[pid] = max(cpu, self._last.get(pid, 0.0))

    def start(self) -> None:
        self._scan(first=True)
        self._thread = threading.Thread(target=self._loop, name="postgres-cpu", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._scan(first=False)

    def stop(self) -> float:
        """CPU seconds the database's backends used since `start`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self._scan(first=False)
        with self._lock:
            return sum(self._last[pid] - base for pid, base in self._base.items())


class SharedServices:
    """Before/after CPU of Redis and of the database's PostgreSQL backends around one measured phase."""

    def __init__(self, redis_url: str | None, database_url: str | None) -> None:
        self.redis_url = redis_url
        self.database = database_name(database_url)
        self._redis0: float | None = None
        self._pg: PostgresCpu | None = None

    def start(self) -> None:
        self._redis0 = redis_cpu_seconds(self.redis_url) if self.redis_url else None
        if self.database:
            self._pg = PostgresCpu(self.database)
            self._pg.start()

    def stop(self) -> dict[str, float | None]:
        redis1 = redis_cpu_seconds(self.redis_url) if self.redis_url else None
        pg = self._pg.stop() if self._pg is not None else None
        self._pg = None
        redis = redis1 - self._redis0 if redis1 is not None and self._redis0 is not None else None
        return {"redis_cpu_s": rnd(redis), "postgres_cpu_s": rnd(pg)}
