"""The edges of RESUME from the shared event log (docs/gateway.md) where an event could be lost or a revoked
session could go on: a stopping node that no longer takes events, a hand-over read in the same batch as the
events after it, a store failure while numbering, a revocation found while catching up.

Same two-node set-up as test_resume_log.py (a hub on its own RedisBus reader per node, one Redis); needs
TEST_REDIS_URL."""

from __future__ import annotations

import pytest

from meadhall.gateway import protocol
from meadhall.gateway.hub import NodeMessage, State
from meadhall.realtime.events import Event
from tests.support.resume_nodes import (
    AUTH,
    OTHER,
    TEST_REDIS_URL,
    USER,
    Sink,
    check_contiguous,
    message,
    published_and_read,
    running_cluster,
    wait_until,
)

pytestmark = pytest.mark.skipif(not TEST_REDIS_URL, reason="TEST_REDIS_URL not set")


@pytest.fixture
async def cluster():
    async with running_cluster() as start:
        yield start


async def resumed(node, session_id: str, seq: int) -> Sink:
    sink = Sink()
    assert await node.resume(session_id, seq, sink) is not None
    await wait_until(lambda: sink.closed is not None or any(t == "RESUMED" for _, t, _ in sink.dispatches()))
    return sink


async def test_a_stopping_node_that_no_longer_takes_events_never_moves_a_session_past_them(cluster):
    """The hand-over timed out (the bus lagged): the hub stops taking events while its reader reads on. The
    session's position stays before what the hub did not number, so a RESUME elsewhere catches it up."""
    node_a, node_b = await cluster(), await cluster()
    first = Sink()
    gs = await node_a.identify(first)
    await published_and_read(node_b, [message(1)], node_a, node_b)
    await wait_until(lambda: first.messages() == [1])
    node_a.hub.unfollow(node_a.bus)
    await published_and_read(node_b, [message(2)], node_a, node_b)  # read by A's bus, not numbered by its hub
    assert first.messages() == [1]
    await node_a.hub.detach(gs, gs.conn)  # the connection closes as the node stops: its position is kept
    await node_a.hub.heartbeat(gs)
    await node_a.die()

    second = await resumed(node_b, gs.id, 2)
    assert second.messages() == [2]
    check_contiguous(second)


async def test_events_read_in_the_same_batch_as_a_hand_over_reach_the_adopted_sessions(cluster):
    """A stopping node's GATEWAY_ADOPT and the events after it arrive in one read of the other node: the
    events are numbered for the adopted sessions, so a later event cannot raise their position past them."""
    node_a, node_b = await cluster(), await cluster()
    gs = await node_a.identify(Sink())
    node_a.hub.unfollow(node_a.bus)
    adopt = Event(NodeMessage.ADOPT, {"marker": "m", "sessions": [[gs.id, USER, AUTH]]}, ())
    # One transaction: both entries become visible together, so B reads them in one batch.
    async with node_b.client.pipeline(transaction=True) as pipe:
        for ev in (adopt, message(1)):
            pipe.xadd(node_b.bus.channel, {"e": ev._replace(id=ev.id or ev.type + "-x").to_json()})
        await pipe.execute()
    await published_and_read(node_b, [message(2)], node_b)
    assert node_b.hub.sessions[gs.id].state is State.DETACHED
    meta = await node_b.hub.store.peek(gs.id, node_b.hub.clock.timestamp())
    assert meta is not None and meta.last_seq == 3  # READY, 1, 2: all numbered by B
    await node_a.die()

    second = await resumed(node_b, gs.id, 1)
    assert second.messages() == [1, 2]
    check_contiguous(second)


async def test_a_store_failure_while_numbering_lets_the_session_go_to_resume_with_nothing_lost(cluster):
    node_a = await cluster()
    first = Sink()
    gs = await node_a.identify(first)
    await published_and_read(node_a, [message(1)], node_a)
    await wait_until(lambda: first.messages() == [1])

    store = node_a.hub.store
    real_append = store.append
    failures = []

    async def failing_append(items, now):
        if not failures:
            failures.append(items)
            raise ConnectionError("redis went away")
        return await real_append(items, now)

    store.append = failing_append
    await published_and_read(node_a, [message(2), message(3)], node_a)
    assert failures, "the store was not asked"
    await wait_until(lambda: first.closed == protocol.CLOSE_UNKNOWN_ERROR)  # a passing error: the client resumes
    assert gs.id not in node_a.hub.sessions
    await node_a.hub.heartbeat(gs)  # a heartbeat still in flight does not move its position either
    await published_and_read(node_a, [message(4)], node_a)  # nobody numbers it now: the log has it

    second = await resumed(node_a, gs.id, 2)
    assert second.messages() == [2, 3, 4]
    check_contiguous(second)
    await published_and_read(node_a, [message(5)], node_a)
    await wait_until(lambda: second.messages()[-1:] == [5])


async def test_a_revocation_found_while_catching_up_ends_the_session_instead_of_resuming_it(cluster):
    node_a, node_b = await cluster(), await cluster()
    first = Sink()
    gs = await node_a.identify(first)
    await published_and_read(node_b, [message(1)], node_a, node_b)
    await wait_until(lambda: first.messages() == [1])
    await node_a.die()
    revoked = Event("SESSION_INVALIDATED", {"reason": "admin_action"}, (USER,), sessions=(AUTH,))
    await published_and_read(node_b, [message(2), revoked, message(3)], node_b)

    second = Sink()
    await node_b.resume(gs.id, 2, second)
    await wait_until(lambda: second.closed is not None)
    assert second.closed == protocol.CLOSE_INVALIDATED
    types = [t for _, t, _ in second.dispatches()]
    assert types == ["MESSAGE_CREATE", "SESSION_INVALIDATED"]  # never RESUMED, nothing after the revocation
    assert gs.id not in node_b.hub.sessions
    assert await node_b.hub.store.peek(gs.id, node_b.hub.clock.timestamp()) is None


async def test_a_session_that_missed_more_than_its_buffer_holds_is_not_resumable(cluster):
    from meadhall.gateway.resume import BUFFER_SIZE

    node_a, node_b = await cluster(), await cluster()
    gs = await node_a.identify(Sink())
    await node_a.die()
    await published_and_read(node_b, [message(n) for n in range(BUFFER_SIZE + 1)], node_b)

    second = Sink()
    assert await node_b.resume(gs.id, 1, second) is None  # the endpoint answers session_expired
    assert second.dispatches() == []
    assert gs.id not in node_b.hub.sessions
    meta = await node_b.hub.store.peek(gs.id, node_b.hub.clock.timestamp())
    assert meta is not None and meta.last_seq == 1  # given up before numbering a thousand events for nothing


async def test_a_store_failure_ending_one_session_does_not_cost_the_others_the_rest_of_the_read(cluster):
    """A revocation and another user's message in one read; dropping the revoked session's state fails (Redis
    away for a moment): the revoked session still ends, and the other still gets its message."""
    node = await cluster()
    revoked_sink, other_sink = Sink(), Sink()
    revoked = await node.identify(revoked_sink)
    await node.identify(other_sink, user=OTHER, auth=80)

    async def failing_drop(session_ids):
        raise ConnectionError("redis went away")

    node.hub.store.drop = failing_drop
    invalidated = Event("SESSION_INVALIDATED", {"reason": "admin_action"}, (USER,), sessions=(AUTH,), id="si-1")
    async with node.client.pipeline(transaction=True) as pipe:  # one read: both visible at once
        for ev in (invalidated, message(1, user=OTHER)._replace(id="m-1")):
            pipe.xadd(node.bus.channel, {"e": ev.to_json()})
        await pipe.execute()
    await wait_until(lambda: revoked_sink.closed == protocol.CLOSE_INVALIDATED)
    await wait_until(lambda: other_sink.messages() == [1])
    assert revoked.id not in node.hub.sessions
    assert other_sink.closed is None
