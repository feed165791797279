"""The multi-node bench (`python -m bench --nodes N`, docs/benchmarks.md): its refusals, the figures it
reads from Redis and PostgreSQL, and one short run of its workloads on two real nodes.

The run needs TEST_DATABASE_URL and TEST_REDIS_URL (PostgreSQL and Redis, as CI sets them); it uses a fresh
database of its own, 6 receivers and 12 messages: about 20 s on a quiet machine (most of it the 26 users'
password hashes and the nodes' start)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from bench.drivers import Context, Skip
from bench.harness import PostgresCpu, ServerProcess, database_name, redis_cpu_seconds
from bench.workloads_nodes import histogram_quantile, nodes_of
from tests.support.isolation import TEST_DATABASE_URL, TEST_REDIS_URL, clean_env, fresh_postgres

ROOT = Path(__file__).resolve().parents[2]
needs_services = pytest.mark.skipif(not (TEST_DATABASE_URL and TEST_REDIS_URL),
                                    reason="needs TEST_DATABASE_URL and TEST_REDIS_URL (PostgreSQL and Redis)")


def bench(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("extra", [[], ["--database-url", "postgresql://h/db"], ["--redis-url", "redis://h"]])
def test_several_nodes_need_postgresql_and_redis(extra: list[str]) -> None:
    done = bench("--nodes", "2", *extra, "--workloads", "nodes_send")
    assert done.returncode == 2
    assert "--nodes above 1 needs --database-url (PostgreSQL) and --redis-url" in done.stderr


def test_nodes_must_be_positive() -> None:
    done = bench("--nodes", "0")
    assert done.returncode == 2
    assert "--nodes must be at least 1" in done.stderr


def test_database_name_of_a_url() -> None:
    assert database_name("postgresql://postgres@127.0.0.1:5432/bench_a?sslmode=disable") == "bench_a"
    assert database_name("postgresql+asyncpg://u:p@h/x") == "x"
    assert database_name("postgresql://h/") is None
    assert database_name("sqlite:///chat.db") is None
    assert database_name(None) is None


def test_histogram_quantile_of_the_observations_between_two_scrapes() -> None:
    before = {0.001: 10.0, 0.005: 10.0, 0.01: 10.0, float("inf"): 10.0}
    # 100 new observations: 50 under 1 ms, 40 in 1-5 ms, 10 in 5-10 ms.
    after = {0.001: 60.0, 0.005: 100.0, 0.01: 110.0, float("inf"): 110.0}
    p50 = histogram_quantile(before, after, 0.50)
    assert p50 == {"observed": 100, "value_ms": 1.0, "bucket_ms": "0.0-1.0"}
    p99 = histogram_quantile(before, after, 0.99)
    assert p99["bucket_ms"] == "5.0-10.0"
    assert p99["value_ms"] == pytest.approx(9.5)
    # The earlier observations are not counted: with none new there is no quantile.
    assert histogram_quantile(after, after, 0.99) == {"observed": 0}
    assert histogram_quantile({}, {}, 0.99) == {"observed": 0}
    # Beyond the last finite bucket: only a lower bound is known.
    slow = {0.001: 0.0, 0.01: 0.0, float("inf"): 5.0}
    assert histogram_quantile({}, slow, 0.99) == {"observed": 5, "value_ms": None, "bucket_ms": "> 10.0"}


def test_redis_cpu_of_an_unreachable_redis_is_unknown() -> None:
    assert redis_cpu_seconds("redis://127.0.0.1:9/0") is None


@pytest.mark.skipif(not TEST_REDIS_URL, reason="needs TEST_REDIS_URL")
def test_redis_cpu_grows_with_its_work() -> None:
    import redis

    assert TEST_REDIS_URL
    before = redis_cpu_seconds(TEST_REDIS_URL)
    assert before is not None
    client = redis.Redis.from_url(TEST_REDIS_URL)
    try:
        # A few ms of Redis CPU (INFO reports it in microseconds); a longer script would hold up the other
        # users of a shared Redis.
        client.eval("local n = 0 for i = 1, 300000 do n = n + i end return n", 0)
    finally:
        client.close()
    after = redis_cpu_seconds(TEST_REDIS_URL)
    assert after is not None and after > before


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="needs TEST_DATABASE_URL")
def test_postgres_cpu_counts_the_backends_of_its_database_only() -> None:
    """A query that spends CPU in one database is counted by that database's meter, not another's."""

    async def spend(url: str) -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.fetchval("SELECT count(*) FROM generate_series(1, 3000000)")
        finally:
            await conn.close()

    with fresh_postgres() as mine, fresh_postgres() as other:
        name = database_name(mine)
        other_name = database_name(other)
        assert name and other_name
        meter, elsewhere = PostgresCpu(name, interval=0.05), PostgresCpu(other_name, interval=0.05)
        meter.start()
        elsewhere.start()
        asyncio.run(spend(mine))
        spent, not_spent = meter.stop(), elsewhere.stop()
    assert spent >= 0.1, spent
    assert not_spent < 0.05, not_spent


@needs_services
def test_two_nodes_run_the_node_workloads() -> None:
    assert TEST_REDIS_URL
    with fresh_postgres() as database:
        env = clean_env(NODES_RECEIVERS="6", NODES_RATE="40")
        done = bench("--nodes", "2", "--database-url", database, "--redis-url", TEST_REDIS_URL,
                     "--workloads", "nodes_send,nodes_bus,nodes_fanout,nodes_heartbeat", "--runs", "1", "--requests", "12",
                     "--warmup", "0", "--no-save", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    server = doc["server"]
    assert server["nodes"] == 2
    assert [n["node_id"] for n in server["node_list"]] == [0, 1]
    assert all(code in (0, -15) for code in server["exit_codes"])  # stopped by the harness, not crashed
    loads = doc["workloads"]
    for name in ("nodes_send", "nodes_bus", "nodes_fanout", "nodes_heartbeat"):
        assert loads[name]["status"] == "ok", loads[name]
        run = loads[name]["runs"][0]
        assert run["errors"] == 0, run.get("error_examples")
        assert len(run["node_cpu_s"]) == 2
        assert run["redis_cpu_s"] is not None and run["postgres_cpu_s"] is not None
    send = loads["nodes_send"]["runs"][0]["figures"]
    assert send["messages"] == 12
    assert send["messages_per_core_s"] > 0
    # The sends' and the fan-out's inserts ran on the database measured (a few ms each: summed over the
    # runs, since one run of 12 messages may stay below a clock tick).
    assert sum(loads[name]["runs"][0]["postgres_cpu_s"] for name in loads) > 0
    bus = loads["nodes_bus"]["runs"][0]["figures"]
    assert bus["messages"] == 12 and bus["other_node_cpu_us_per_message"] is not None
    assert "other_node_cpu_us_per_message" not in send  # nodes_send sends through both nodes
    fan = loads["nodes_fanout"]["runs"][0]["figures"]
    assert fan["messages"] == 12 and fan["deliveries"] == 12 * 6
    assert [n["receivers"] for n in fan["nodes"]] == [3, 3]
    for node in fan["nodes"]:
        # Every node read every event from the bus (METRICS_ENABLED is on for this workload).
        assert node["bus_lag_p99"]["observed"] >= 12
        assert node["last_receiver_p99_ms"] is not None
    beat = loads["nodes_heartbeat"]["runs"][0]["figures"]
    assert beat["connections"] == 6 and beat["heartbeats"] == 12
    assert beat["nodes_cpu_us_per_heartbeat"] is not None


def test_node_workloads_skip_on_one_node(tmp_path: Path) -> None:
    one = ServerProcess(tmp_path, {}, tmp_path / "server.log")
    for nodes in ([], [one]):
        ctx = Context(one, requests=1, concurrency=1, shared={"nodes": nodes})
        with pytest.raises(Skip, match="needs two nodes or more"):
            nodes_of(ctx)
    two = Context(one, requests=1, concurrency=1, shared={"nodes": [one, one]})
    assert nodes_of(two) == [one, one]
