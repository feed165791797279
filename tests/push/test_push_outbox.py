"""The durable Web Push queue (docs/push.md, "A durable queue"): a notification is a `push_outbox` row written in the
message's transaction, so one that a node never delivered (stopped or killed after the commit) is delivered by
another runtime on the same database; a claim is a lease that a live node renews and a dead node's runs out; two
runtimes never both deliver one row; a graceful stop hands its rows back at once; the table keeps at most MAX_QUEUED
rows (the oldest go) and gives up rows too old or failed too often. Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from meadhall.app import create_app
from meadhall.core.clock import as_utc
from meadhall.db.schema import push_outbox
from meadhall.push import delivery
from meadhall.push.delivery import deliveries_of
from meadhall.runtime import Runtime
from tests.support.conversations import open_dm
from tests.support.messages import post
from tests.support.outbound import confine
from tests.support.push import subscribe

LEASE = delivery.LEASE_SECONDS


@asynccontextmanager
async def another_node(settings: Any, rt: Runtime, clock: Any, push_service: Any) -> AsyncIterator[Runtime]:
    """A runtime on the same database (and Redis), as a node started after the first one died, with its app built
    (which wires push in) and its outbound client trusting the test's push service."""
    other = Runtime(settings, clock=clock, redis_prefix=getattr(rt.store, "prefix", f"t-{uuid.uuid4().hex[:8]}"))
    confine(other.outbound)
    other.outbound.ssl_context = push_service.client_tls
    await other.start(run_migrations=False)
    create_app(settings, other)
    try:
        yield other
    finally:
        await deliveries_of(other).idle()
        await other.close()


async def rows(rt: Runtime) -> list[dict[str, Any]]:
    async with rt.engine.connect() as conn:
        return [dict(r) for r in (await conn.execute(select(push_outbox).order_by(push_outbox.c.id))).mappings()]


async def until(condition: Any, seconds: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def kill_deliveries(rt: Runtime) -> None:
    """What SIGKILL does to a node's deliveries: they stop where they are; nothing is given back."""
    found = deliveries_of(rt)
    found.stopping = True
    for task in list(found.tasks):
        task.cancel()
    found.held.clear()


async def dm_pair(api: Any, accounts: Any, push_service: Any) -> tuple[Any, Any, dict[str, Any]]:
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    dm = await open_dm(api, alice, bob)
    await subscribe(api, bob, push_service)
    return alice, bob, dm


async def test_a_notification_a_stopped_node_never_delivered_is_delivered_by_a_new_runtime(
        api, client, accounts, rt, settings, clock, push_service):
    alice, _bob, dm = await dm_pair(api, accounts, push_service)
    kill_deliveries(rt)  # the node dies right after its commit, before any delivery

    await post(client, alice, dm["id"], "are you there?")
    await asyncio.sleep(0.05)
    assert push_service.received() == []
    [waiting] = await rows(rt)
    assert waiting["claimed_by"] is None and waiting["attempts"] == 0

    async with another_node(settings, rt, clock, push_service) as other:
        await deliveries_of(other).poll()
        await deliveries_of(other).idle()
    assert [r["path"] for r in push_service.received()] == ["/device"]
    assert await rows(rt) == []


async def test_a_killed_nodes_claim_runs_out_and_another_node_delivers_the_row(
        api, client, accounts, rt, settings, clock, push_service):
    alice, _bob, dm = await dm_pair(api, accounts, push_service)
    push_service.delay = 3.0
    await post(client, alice, dm["id"], "in flight")
    await until(lambda: len(push_service.received()) == 1)  # node A is posting it
    kill_deliveries(rt)
    push_service.delay = 0.0

    async with another_node(settings, rt, clock, push_service) as other:
        await deliveries_of(other).poll()
        await deliveries_of(other).idle()
        assert len(push_service.received()) == 1  # the lease still holds: nobody else takes the row
        assert len(await rows(rt)) == 1
        clock.advance(seconds=LEASE + 1)
        await deliveries_of(other).poll()
        await deliveries_of(other).idle()
    # Delivered again (the killed node's post may or may not have reached the device; the tag shows it once).
    assert len(push_service.received()) == 2
    assert await rows(rt) == []


async def test_a_live_node_renews_its_claim_so_nobody_else_takes_the_row(
        api, client, accounts, rt, settings, clock, push_service):
    alice, _bob, dm = await dm_pair(api, accounts, push_service)
    push_service.delay = 1.0
    await post(client, alice, dm["id"], "slow service")
    await until(lambda: len(push_service.received()) == 1)
    async with another_node(settings, rt, clock, push_service) as other:
        clock.advance(seconds=LEASE * 2 / 3)
        await deliveries_of(rt).renew()
        clock.advance(seconds=LEASE * 2 / 3)  # past the first lease, within the renewed one
        await deliveries_of(other).poll()
        await deliveries_of(other).idle()
        await deliveries_of(rt).idle()
    assert len(push_service.received()) == 1
    assert await rows(rt) == []


async def test_two_runtimes_never_both_deliver_one_row(api, client, accounts, rt, settings, clock, push_service,
                                                       backend, monkeypatch):
    alice, _bob, dm = await dm_pair(api, accounts, push_service)
    deliveries_of(rt).stopping = True
    for i in range(10):  # the messages.send burst
        await post(client, alice, dm["id"], f"message {i}")
    assert len(await rows(rt)) == 10
    monkeypatch.setattr(delivery, "IN_FLIGHT", 3)  # each claim takes at most 3: both nodes must take some
    push_service.delay = 0.05
    deliveries_of(rt).stopping = False
    async with another_node(settings, rt, clock, push_service) as other:
        a, b = deliveries_of(rt), deliveries_of(other)
        if backend == "postgres":  # each node on its own connections, at once (SKIP LOCKED)
            await asyncio.gather(a.poll(), b.poll(), a.poll(), b.poll())
            await asyncio.gather(a.idle(), b.idle())
        else:  # SQLite runs one node; the claims still exclude each other, in turns
            await a.poll()
            await b.poll()
            await asyncio.gather(a.idle(), b.idle())
        assert a.claimed and b.claimed
    assert len(push_service.received()) == 10
    assert await rows(rt) == []


async def test_a_graceful_stop_hands_its_rows_back_at_once(api, client, accounts, rt, settings, clock, push_service):
    alice, _bob, dm = await dm_pair(api, accounts, push_service)
    push_service.delay = 3.0
    await post(client, alice, dm["id"], "during the stop")
    await until(lambda: len(push_service.received()) == 1)
    await rt.run_stop_hooks()  # what a graceful stop (SIGTERM) runs; the post takes longer than the stop allows
    [handed_back] = await rows(rt)
    assert as_utc(handed_back["available_at"]) <= clock.now()
    push_service.delay = 0.0
    async with another_node(settings, rt, clock, push_service) as other:
        await deliveries_of(other).poll()  # no clock advance: the lease was given back
        await deliveries_of(other).idle()
    assert len(push_service.received()) == 2
    assert await rows(rt) == []


async def test_the_queue_keeps_the_newest_rows_up_to_its_bound(api, client, accounts, rt, push_service, monkeypatch):
    alice, _bob, dm = await dm_pair(api, accounts, push_service)
    deliveries_of(rt).stopping = True
    for i in range(4):
        await post(client, alice, dm["id"], f"message {i}")
    queued = [r["id"] for r in await rows(rt)]
    monkeypatch.setattr(delivery, "MAX_QUEUED", 2)
    await deliveries_of(rt).poll()
    assert [r["id"] for r in await rows(rt)] == queued[2:]


async def test_rows_too_old_or_failed_too_often_are_given_up(api, client, accounts, rt, settings, clock,
                                                             push_service):
    alice, _bob, dm = await dm_pair(api, accounts, push_service)
    kill_deliveries(rt)
    await post(client, alice, dm["id"], "old news")
    await post(client, alice, dm["id"], "poison")
    old, poison = await rows(rt)
    async with rt.engine.begin() as conn:
        await conn.execute(push_outbox.update().where(push_outbox.c.id == poison["id"])
                           .values(attempts=delivery.MAX_ATTEMPTS))
        await conn.execute(push_outbox.update().where(push_outbox.c.id == old["id"])
                           .values(created_at=clock.now() - timedelta(hours=13)))
    async with another_node(settings, rt, clock, push_service) as other:
        await deliveries_of(other).poll()
        await deliveries_of(other).idle()
    assert push_service.received() == []
    assert await rows(rt) == []
