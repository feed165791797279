"""The CLI's events travel through the outbox (docs/architecture.md, "CLI effects reach live connections"):
written in the transaction of the change, so a rolled-back change leaves none; published on the bus of a
serving process once (also with two processes draining, and with Redis each event reaches every node once),
also when they were written while no serving process ran; rows older than the resume window are dropped.

The CLI runs in-process (tests/cli/conftest.py) against the test's database; the test's app is served (its
lifespan starts the drain) only where a test says so, and `capture_events` watches its bus."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import func, select

from meadhall.db.schema import event_outbox
from meadhall.realtime.events import Event, EventType, event
from meadhall.realtime.outbox import STALE_AFTER, OutboxDrain
from meadhall.runtime import Runtime
from tests.support.served import served


async def outbox_rows(rt: Any) -> int:
    async with rt.engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(event_outbox))).scalar_one())


async def until_empty(rt: Any, wait: float = 3.0) -> None:
    deadline = asyncio.get_running_loop().time() + wait
    while await outbox_rows(rt):
        assert asyncio.get_running_loop().time() < deadline, "the outbox was not drained"
        await asyncio.sleep(0.05)


async def until_captured(events: list[Event], count: int, wait: float = 3.0) -> None:
    deadline = asyncio.get_running_loop().time() + wait
    while len(events) < count:
        assert asyncio.get_running_loop().time() < deadline, f"{len(events)} of {count} events published"
        await asyncio.sleep(0.02)


@pytest.fixture
async def cli_runtime(settings: Any, rt: Any) -> Any:
    """A runtime as the CLI builds it (outbox mode), on the test's database."""
    runtime = Runtime(settings, outbox=True, redis_prefix=rt.redis_prefix)
    await runtime.start(run_migrations=False)
    yield runtime
    await runtime.close()


async def test_a_cli_change_stores_its_events_and_publishes_none_itself(cli, accounts, rt, capture_events):
    bob = await accounts.register("bob")
    r = await cli("make-admin", "--email", "bob@example.com")
    assert r.exit_code == 0, r.stderr
    # SESSION_INVALIDATED (his sessions were deleted) and USER_UPDATE, waiting for a serving process.
    assert await outbox_rows(rt) == 2
    await capture_events.settle()
    assert [e for e in capture_events if bob.id in map(str, e.users)] == []


async def test_a_rolled_back_change_leaves_no_outbox_row(cli_runtime, rt):
    async with cli_runtime.uow() as uow:
        uow.emit(event(EventType.USER_UPDATE, {"id": "1"}, [1]))
    assert await outbox_rows(rt) == 1

    with pytest.raises(RuntimeError):
        async with cli_runtime.uow() as uow:
            uow.emit(event(EventType.USER_UPDATE, {"id": "2"}, [2]))
            raise RuntimeError("the change fails after its events were queued")
    assert await outbox_rows(rt) == 1


async def test_rows_written_while_no_server_runs_are_published_once_when_it_starts(
        cli, accounts, app, rt, capture_events):
    bob = await accounts.register("bob")
    carol = await accounts.register("carol")
    for command, email in (("make-admin", "bob@example.com"), ("reset-password", "carol@example.com")):
        r = await cli(command, "--email", email)
        assert r.exit_code == 0, r.stderr
    assert await outbox_rows(rt) == 3
    await capture_events.reset()

    async with served(app):  # the lifespan starts the outbox drain
        await until_captured(capture_events, 3)
        await until_empty(rt)
        await capture_events.settle()
    got = [(e.type, e.users) for e in capture_events]
    assert got == [(EventType.SESSION_INVALIDATED, (int(bob.id),)), (EventType.USER_UPDATE, (int(bob.id),)),
                   (EventType.SESSION_INVALIDATED, (int(carol.id),))]
    assert capture_events[0].data["reason"] == "admin_action"
    assert capture_events[1].data["is_instance_admin"] is True
    assert capture_events[2].data["reason"] == "password_changed"


async def test_rows_older_than_the_resume_window_are_dropped_unpublished(cli, accounts, app, rt, clock,
                                                                        capture_events):
    await accounts.register("bob")
    r = await cli("make-admin", "--email", "bob@example.com")
    assert r.exit_code == 0, r.stderr
    assert await outbox_rows(rt) == 2
    await capture_events.reset()
    clock.advance(STALE_AFTER + 1)  # the service starts long after the command

    async with served(app):
        await until_empty(rt)
        await capture_events.settle()
    assert list(capture_events) == []


async def test_two_processes_draining_at_once_publish_each_event_once(cli_runtime, settings, rt, backend,
                                                                      capture_events):
    count = 1200  # more than one claim's batch
    async with cli_runtime.uow() as uow:
        uow.emit(*[event(EventType.USER_UPDATE, {"n": n}, [1]) for n in range(count)])
    other = Runtime(settings, redis_prefix=rt.redis_prefix)  # a second node: same database, same channel
    seen_by_other: list[Event] = []

    async def on_other(ev: Event) -> None:
        seen_by_other.append(ev)

    other.bus.subscribe(on_other)  # never started: it sees only what it publishes itself without Redis
    try:
        # SQLite serves from one process (docs/deployment.md): the second one's drains share the first one's
        # engine, whose write lock queues them as SQLite's own lock queues two processes.
        engine = rt.engine if backend == "sqlite" else other.engine
        drains = [OutboxDrain(rt.engine, rt.clock, rt.ids, rt.bus), OutboxDrain(engine, other.clock, other.ids, other.bus)]
        published = await asyncio.gather(*(d.drain() for d in drains * 2))
    finally:
        await other.close()
    assert sum(published) == count
    await capture_events.settle()
    numbers = [e.data["n"] for e in [*capture_events, *seen_by_other]]
    assert sorted(numbers) == list(range(count))
    # Each process publishes its claims oldest first.
    for log in (capture_events, seen_by_other):
        mine = [e.data["n"] for e in log]
        assert mine == sorted(mine)
