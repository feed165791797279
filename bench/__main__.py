"""`python -m bench`: start a real `meadhall serve` (or `--nodes N` of them on one PostgreSQL and one
Redis), run the selected workloads, print one JSON document.

The JSON goes to stdout and to bench/results/<timestamp>.json; progress lines go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import shutil
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import bench.workloads_admin  # noqa: F401 - registers the instance-administration workloads (last: they restart the server)
import bench.workloads_gateway  # noqa: F401 - registers the gateway fan-out workloads
import bench.workloads_import  # noqa: F401 - registers the Discord import workload
import bench.workloads_messages  # noqa: F401 - registers the message workloads
import bench.workloads_nodes  # noqa: F401 - registers the multi-node workloads (they skip on one node)
import bench.workloads_search  # noqa: F401 - registers the search workload of a million messages
import bench.workloads_social  # noqa: F401 - registers the friends, conversations and presence workloads
from bench import calibrate, check
from bench.drivers import Context, Samples, Skip
from bench.harness import (
    RssSampler,
    ServerError,
    ServerProcess,
    SharedServices,
    median,
    mib,
    ms,
    percentile,
    rnd,
    run_cli,
    server_env,
    snapshot,
    tree_snapshot,
)
from bench.workloads import REGISTRY, Workload

RESULTS_DIR = Path(__file__).resolve().parent / "results"
BENCH_RATE = "1000000/60"  # every bucket: high enough that the limiter never refuses, still evaluated


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--workloads", default="all",
                        help="comma-separated workload names (default: all registered; see --list)")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per workload (default 5)")
    parser.add_argument("--requests", type=int, default=1000,
                        help="operations per run (default 1000; some workloads cap it, e.g. login)")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent client workers (default 16)")
    parser.add_argument("--warmup", type=int, default=100,
                        help="unmeasured operations before each workload's runs (default 100, at most a fifth of "
                             "--requests; 0 = none)")
    parser.add_argument("--database-url", help="PostgreSQL URL for the server (default: SQLite in DATA_DIR)")
    parser.add_argument("--redis-url", help="Redis URL for the server (default: in-process bus and limiter)")
    parser.add_argument("--nodes", type=int, default=1,
                        help="start this many `meadhall serve` nodes on the same database and Redis (default 1; "
                             "more than one needs --database-url and --redis-url); server CPU and memory are "
                             "then summed over the nodes")
    parser.add_argument("--server-cpu", help="pin the server process(es) to these CPUs with taskset, e.g. 1")
    parser.add_argument("--keep-data", action="store_true",
                        help="keep the temporary directory (DATA_DIR, server.log, sessions file)")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results/<timestamp>.json")
    parser.add_argument("--list", action="store_true", help="list the registered workloads and exit")
    parser.add_argument("--check", action="store_true", help="run the budgeted workloads with a calibration and "
                        "exit 1 when a figure is over its budget (docs/budgets.md); the suite sets runs and requests")
    parser.add_argument("--short", action="store_true", help="with --check: the short suite (CI, under 2 minutes)")
    args = parser.parse_args(argv)
    for name in ("runs", "requests", "concurrency"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.warmup < 0:
        parser.error("--warmup must not be negative")
    if args.nodes < 1:
        parser.error("--nodes must be at least 1")
    if args.nodes > 1 and not (args.database_url and args.redis_url):
        # Nodes on SQLite and the in-process bus would each have their own data and events.
        parser.error("--nodes above 1 needs --database-url (PostgreSQL) and --redis-url")
    if args.check:
        if args.workloads != "all" or args.nodes > 1:
            parser.error("--check runs its own suite on one node: no --workloads, no --nodes")
        args.suite = check.SHORT if args.short else check.FULL
        args.workloads = ",".join(check.suite_steps(args.suite))
        args.server_cpu = check.server_cpu(args.server_cpu)
    elif args.short:
        parser.error("--short goes with --check")
    return args


def select(spec: str) -> list[Workload]:
    if spec.strip() in ("", "all"):
        return list(REGISTRY.values())
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise SystemExit(f"unknown workload(s): {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    return [REGISTRY[n] for n in dict.fromkeys(names)]


def redact(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def rate_limits() -> dict[str, str]:
    try:
        from meadhall.core.ratelimit import BUCKETS
    except ImportError:
        return {"global": BENCH_RATE}
    return {name: BENCH_RATE for name in BUCKETS}


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["mem_total_mib"] = mib(int(line.split()[1]))
                break
    except OSError:
        pass
    return info


def versions() -> dict[str, str]:
    import httpx
    import websockets

    return {"httpx": httpx.__version__, "websockets": websockets.__version__}


def _last_line(text: str) -> str:
    """The last informative line of CLI output (Typer draws its errors inside a box)."""
    lines = [line.strip(" \t│╭╮╰╯─") for line in text.splitlines()]
    lines = [line for line in lines if line and line.lower() != "error"]
    return lines[-1][:200] if lines else "no output"


def _read_sessions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def prepare_users(server: ServerProcess, sessions: Path, count: int, shared: dict[str, Any]) -> None:
    """`meadhall migrate` then `meadhall create-user --count N --sessions PATH` against the server's
    DATA_DIR / DATABASE_URL, before the server starts. A failure is recorded, not raised: the workloads
    that need users are then skipped with this reason."""
    data_dir = str(server.data_dir)
    rc, out, err = await run_cli(server.env, "migrate", "--data-dir", data_dir)
    if rc != 0:
        shared["users_error"] = f"skipped: `meadhall migrate` failed (exit {rc}): {_last_line(err or out)}"
        return
    # A random prefix: on a PostgreSQL database kept between bench runs the names must not collide.
    prefix = f"bench{secrets.token_hex(3)}u"
    started = time.perf_counter()
    rc, out, err = await run_cli(server.env, "create-user", "--count", str(count), "--prefix", prefix,
                                 "--sessions", str(sessions), "--data-dir", data_dir)
    if rc != 0:
        shared["users_error"] = f"skipped: `meadhall create-user` failed (exit {rc}): {_last_line(err or out)}"
        return
    try:
        users = _read_sessions(sessions)
    except (OSError, ValueError) as exc:
        shared["users_error"] = f"skipped: cannot read the sessions file of create-user: {exc}"
        return
    missing = [k for k in ("id", "username", "password", "token") if users and k not in users[0]]
    if len(users) < count or missing:
        shared["users_error"] = (f"skipped: create-user wrote {len(users)} sessions "
                                 f"(wanted {count}; missing keys {missing})")
        return
    shared["users"] = users
    progress(f"created {count} users with sessions ({time.perf_counter() - started:.1f} s)")


def summarise(runs: list[dict[str, Any]], latencies: list[float]) -> dict[str, Any]:
    lat = sorted(latencies)
    tputs = [r["throughput_ops_s"] for r in runs]
    return {
        "throughput_ops_s": rnd(median(tputs), 1),
        "throughput_ops_s_range": [min(tputs), max(tputs)],
        "p50_ms": ms(percentile(lat, 50)),
        "p95_ms": ms(percentile(lat, 95)),
        "p99_ms": ms(percentile(lat, 99)),
        "p50_ms_median_of_runs": rnd(median([r["p50_ms"] for r in runs if r["p50_ms"] is not None])),
        "p99_ms_median_of_runs": rnd(median([r["p99_ms"] for r in runs if r["p99_ms"] is not None])),
        "mean_ms": ms(sum(lat) / len(lat)) if lat else None,
        "max_ms": ms(lat[-1]) if lat else None,
        "samples": len(lat),
        "errors": sum(r["errors"] for r in runs),
        "server_cpu_s": rnd(median([r["server_cpu_s"] for r in runs])),
        "server_cpu_s_total": rnd(sum(r["server_cpu_s"] for r in runs)),
        "server_cpu_ms_per_op": rnd(median([r["server_cpu_ms_per_op"] for r in runs
                                            if r["server_cpu_ms_per_op"] is not None])),
        "server_cpu_util": rnd(median([r["server_cpu_util"] for r in runs])),
        "client_cpu_s": rnd(median([r["client_cpu_s"] for r in runs])),
        "rss_peak_mib": max(r["rss_peak_mib"] for r in runs),
        "rss_last_mib": runs[-1]["rss_last_mib"],
        "hwm_mib": runs[-1]["hwm_mib"],
        **{name: rnd(median([r[name] for r in runs if r.get(name) is not None]))
           for name in ("redis_cpu_s", "redis_cpu_ms_per_op", "postgres_cpu_s", "postgres_cpu_ms_per_op")
           if any(r.get(name) is not None for r in runs)},
    }


def _nodes(ctx: Context) -> list[ServerProcess]:
    return list(ctx.shared.get("nodes") or [ctx.server])


async def measure_run(wl: Workload, ctx: Context, sampler: RssSampler | list[RssSampler],
                      services: SharedServices | None = None) -> tuple[dict[str, Any], list[float]]:
    nodes = _nodes(ctx)
    samplers = sampler if isinstance(sampler, list) else [sampler]
    pids = [node.pid for node in nodes]
    before = tree_snapshot(pids)
    per_node0 = [snapshot(pid).cpu_s for pid in pids]
    for each in samplers:
        each.reset()
    if services is not None:
        services.start()
    client0 = os.times()
    started = time.perf_counter()
    result = await wl.fn(ctx)
    wall = time.perf_counter() - started
    client1 = os.times()
    after = tree_snapshot(pids)
    per_node1 = [snapshot(pid).cpu_s for pid in pids]
    shared_cpu = services.stop() if services is not None else {}
    samples = result if isinstance(result, Samples) else Samples(latencies=list(result))
    load_wall = samples.wall_s or wall
    lat = sorted(samples.latencies)
    cpu = after.cpu_s - before.cpu_s
    run: dict[str, Any] = {
        "ops": len(lat),
        "errors": samples.errors,
        "wall_s": rnd(load_wall),
        "throughput_ops_s": rnd(len(lat) / load_wall, 1),
        "p50_ms": ms(percentile(lat, 50)),
        "p99_ms": ms(percentile(lat, 99)),
        "max_ms": ms(lat[-1]) if lat else None,
        "server_cpu_s": rnd(cpu),
        "server_cpu_ms_per_op": rnd(cpu * 1000 / len(lat)) if lat else None,
        "server_cpu_util": rnd(cpu / wall),
        "client_cpu_s": rnd((client1.user + client1.system) - (client0.user + client0.system)),
        # With several nodes: the sum of each node's peak (an upper bound of the peak of their sum).
        "rss_peak_mib": mib(max(sum(each.peak_kib for each in samplers), before.rss_kib, after.rss_kib)),
        "rss_last_mib": mib(after.rss_kib),
        "hwm_mib": mib(after.hwm_kib),
        "server_processes": after.processes,
    }
    if len(nodes) > 1:
        run["node_cpu_s"] = [rnd(b - a) for a, b in zip(per_node0, per_node1, strict=True)]
    for name, value in shared_cpu.items():
        if value is not None:
            run[name] = value
            run[name.replace("_cpu_s", "_cpu_ms_per_op")] = rnd(value * 1000 / len(lat)) if lat else None
    figures = getattr(samples, "figures", None)  # a workload's own measured phase (bench/workloads_nodes.py)
    if figures:
        run["figures"] = figures
    if samples.error_examples:
        run["error_examples"] = samples.error_examples
    return run, samples.latencies


async def run_workload(wl: Workload, base: Context, args: argparse.Namespace,
                       sampler: RssSampler | list[RssSampler]) -> dict[str, Any]:
    n = min(args.requests, wl.max_ops) if wl.max_ops else args.requests
    ctx = base.for_workload(n)
    head: dict[str, Any] = {"description": wl.description}
    runs: list[dict[str, Any]] = []
    latencies: list[float] = []
    try:
        if wl.setup:
            await wl.setup(ctx)
        warmup = min(args.warmup, max(1, n // 5))  # capped, so that expensive workloads stay short
        if args.warmup:
            await wl.fn(base.for_workload(warmup))
        for i in range(args.runs):
            services = SharedServices(args.redis_url, args.database_url)
            run, lat = await measure_run(wl, ctx, sampler, services)
            runs.append(run)
            latencies.extend(lat)
            shared_cpu = "".join(f", {name[:-6]} cpu {run[name]} s" for name in ("redis_cpu_s", "postgres_cpu_s")
                                 if name in run)
            progress(f"{wl.name} run {i + 1}/{args.runs}: {run['throughput_ops_s']} ops/s, "
                     f"p50 {run['p50_ms']} ms, p99 {run['p99_ms']} ms, errors {run['errors']}, "
                     f"server cpu {run['server_cpu_s']} s{shared_cpu}, rss {run['rss_last_mib']} MiB")
    except Skip as exc:
        progress(f"{wl.name}: {exc}")
        return {"status": "skipped", "reason": str(exc), **head}
    except Exception as exc:  # one broken workload must not lose the others' results
        reason = f"{type(exc).__name__}: {exc}"
        progress(f"{wl.name}: error: {reason}")
        return {"status": "error", "reason": reason, **head, "runs": runs}
    return {"status": "ok", **head, "requests_per_run": n, "warmup": warmup if args.warmup else 0,
            "concurrency": ctx.concurrency,
            "summary": summarise(runs, latencies), "runs": runs}


async def run_bench(args: argparse.Namespace, selected: list[Workload]) -> dict[str, Any]:
    # SIGTERM (CI timeouts, kill) cancels the run like Ctrl-C does, so the `finally` stops the server.
    main_task = asyncio.current_task()
    assert main_task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main_task.cancel)
    started_at = datetime.now(UTC)
    machine = machine_info()
    tmp_root = Path(tempfile.mkdtemp(prefix="meadhall-bench-"))
    data_dir = tmp_root / "data"
    data_dir.mkdir()
    env = server_env(data_dir, database_url=args.database_url, redis_url=args.redis_url,
                     rate_limits=rate_limits(), secret_key=secrets.token_urlsafe(48))
    metrics = any(w.metrics for w in selected)
    if metrics:
        env["METRICS_ENABLED"] = "true"
    # Several nodes share DATA_DIR (as nodes on shared file storage would) and differ in NODE_ID, which keeps
    # their snowflake ids apart; each has its own port and log.
    servers = [ServerProcess(data_dir, {**env, "NODE_ID": str(i)} if args.nodes > 1 else env,
                             tmp_root / ("server.log" if i == 0 else f"server{i}.log"), cpu=args.server_cpu)
               for i in range(args.nodes)]
    server = servers[0]
    shared: dict[str, Any] = {"nodes": servers}
    samplers: list[RssSampler] = []
    server_info: dict[str, Any] = {
        "backend": "postgresql" if args.database_url else "sqlite",
        "database": redact(args.database_url) or "sqlite (DATA_DIR/chat.db)",
        "bus": "redis" if args.redis_url else "in-process",
        "redis": redact(args.redis_url),
        "command": " ".join(["meadhall", *server.command[1:]]),
        "rate_limits": f"every bucket {BENCH_RATE}",
        "log_level": "warning",
        "metrics_enabled": metrics,
        "nodes": args.nodes,
    }
    results: dict[str, Any] = {}
    again: dict[str, Any] = {}  # --check: the workloads measured once more
    try:
        need = max((w.needs_users for w in selected), default=0)
        if need:
            await prepare_users(server, tmp_root / "sessions.jsonl", need, shared)
            if "users_error" in shared:
                progress(shared["users_error"])
        if args.check:  # earlier starts on the same DATA_DIR, for start to ready and idle memory (bench/check.py)
            server_info["starts"] = await check.startup_probes(lambda i: ServerProcess(
                data_dir, env, tmp_root / f"start{i}.log", cpu=args.server_cpu), check.STARTS - 1)
        for node in servers:
            progress(f"starting {' '.join(['meadhall', *node.command[1:]])}")
            node.start()
        # Node 0 first: on a new database it is the one that finds the schema made by `meadhall migrate`.
        server_info["readyz"] = await server.wait_ready()
        for node in servers[1:]:
            await node.wait_ready()
        server_info["pid"] = server.pid
        server_info["startup_s"] = rnd(server.startup_s)
        idle = tree_snapshot([node.pid for node in servers])
        server_info["idle_rss_mib"] = mib(idle.rss_kib)
        server_info["startup_cpu_s"] = rnd(idle.cpu_s)
        if args.check:
            server_info["starts"].append(check.start_record(server))
            shared["calibration_ms"] = []
        if args.nodes > 1:
            server_info["node_list"] = [{"pid": node.pid, "port": node.port, "node_id": i,
                                         "startup_s": rnd(node.startup_s),
                                         "idle_rss_mib": mib(snapshot(node.pid).rss_kib)}
                                        for i, node in enumerate(servers)]
        base = Context(server, requests=args.requests, concurrency=args.concurrency, shared=shared)
        async with base.http() as client:
            server_info["version"] = (await client.get("/api/v1/meta")).json().get("version")
        progress(f"{'server' if args.nodes == 1 else f'{args.nodes} nodes'} ready in {server.startup_s:.2f} s "
                 f"(pid {', '.join(str(node.pid) for node in servers)}, rss {mib(idle.rss_kib)} MiB)")
        samplers = [RssSampler(node.pid) for node in servers]
        for each in samplers:
            each.start()
        for wl in selected:
            if args.check:  # the calibration beside each workload, so that it follows the machine's load
                shared["calibration_ms"] += calibrate.measure(args.server_cpu, check.CALIBRATIONS)
            results[wl.name] = await run_workload(wl, base, check.step_args(args, wl.name), samplers)
            for name in check.measure_again({"workloads": results}, args, shared, again) if args.check else []:
                progress(f"{name}: a figure of it is over budget: measured once more (the lower figure counts)")
                again[name] = await run_workload(REGISTRY[name], base, check.step_args(args, name), samplers)
            gone = [(i, node) for i, node in enumerate(servers)
                    if node.proc is not None and node.proc.poll() is not None]
            if gone:
                i, node = gone[0]
                which = "" if args.nodes == 1 else f" (node {i})"
                assert node.proc is not None
                server_info["error"] = f"exited with code {node.proc.returncode} during {wl.name}{which}"
                server_info["log_tail"] = node.log_tail().splitlines()
                progress(f"server {server_info['error']}; remaining workloads not run")
                for rest in selected[selected.index(wl) + 1:]:
                    results[rest.name] = {"status": "not_run", "reason": "the server had exited",
                                          "description": rest.description}
                break
        if args.check:  # the server idle again: the calibration after the last workload
            shared["calibration_ms"] += calibrate.measure(args.server_cpu, check.CALIBRATIONS)
    finally:
        for each in samplers:
            each.stop()
        server_info["exit_code"] = server.stop()
        for node in servers[1:]:
            node.stop()
        if args.nodes > 1:
            server_info["exit_codes"] = [node.exit_code for node in servers]
        if args.keep_data:
            server_info["kept_dir"] = str(tmp_root)
            progress(f"kept {tmp_root} (data/, server*.log, sessions.jsonl)")
        else:
            shutil.rmtree(tmp_root, ignore_errors=True)
    finished_at = datetime.now(UTC)
    return {
        "bench": "meadhall",
        "format": 1,
        "started_at": started_at.isoformat(timespec="seconds"),
        "duration_s": rnd((finished_at - started_at).total_seconds(), 1),
        "command": " ".join(["python -m bench", *sys.argv[1:]]),
        "machine": {**machine, "loadavg_at_end": [round(x, 2) for x in os.getloadavg()]},
        "server": server_info,
        "client": {"runs": args.runs, "requests_per_run": args.requests, "concurrency": args.concurrency,
                   "warmup": args.warmup, "same_machine": True, **versions()},
        "workloads": results,
        **({"calibration_ms": shared["calibration_ms"]} if "calibration_ms" in shared else {}),
        **({"workloads_again": again} if again else {}),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for wl in REGISTRY.values():
            extra = "".join([f" (max {wl.max_ops} ops/run)" if wl.max_ops else "",
                             f" (needs {wl.needs_users} users)" if wl.needs_users else ""])
            print(f"{wl.name:20} {wl.description}{extra}")
        return 0
    selected = select(args.workloads)
    try:
        doc = asyncio.run(run_bench(args, selected))
    except ServerError as exc:
        progress(f"failed: {exc}")
        return 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        progress("interrupted; server stopped, nothing written")
        return 130
    verdicts = check.conclude(doc, args.suite, doc.pop("calibration_ms", [])) if args.check else True
    text = json.dumps(doc, indent=2)
    if not args.no_save:
        RESULTS_DIR.mkdir(exist_ok=True)
        path = RESULTS_DIR / f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
        path.write_text(text + "\n")
        progress(f"wrote {path}")
    print(text)
    failed = "error" in doc["server"] or any(r.get("status") == "error" for r in doc["workloads"].values())
    return 1 if failed or not verdicts else 0


if __name__ == "__main__":
    sys.exit(main())
