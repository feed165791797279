"""Unit of work (house rule 3): one transaction; events and after-commit callbacks leave only after the
commit, and a rolled-back block drops them together with its writes (audit included). Every backend."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from meadhall.audit.record import record
from meadhall.core.clock import as_utc
from meadhall.core.errors import AppError
from meadhall.core.ids import id_timestamp_ms
from meadhall.db.schema import audit_log
from meadhall.db.schema.outbox import event_outbox
from meadhall.realtime.events import Event, event
from meadhall.realtime.outbox import OutboxDrain

POLL_INTERVAL = 0.005
POLLS = 1000


async def wait_for(predicate: Callable[[], bool]) -> None:
    """Poll until `predicate()` holds; fail after about five seconds."""
    for _ in range(POLLS):
        if predicate():
            return
        await asyncio.sleep(POLL_INTERVAL)
    raise AssertionError("condition not met within 5 s")


async def committed_audit_rows(rt: Any) -> list[Any]:
    """Read through a fresh connection, i.e. only what is committed."""
    async with rt.engine.connect() as conn:
        return list((await conn.execute(select(audit_log).order_by(audit_log.c.id))).all())


class Spy:
    """Wraps `rt.bus.publish`: records every batch with the committed audit count seen at that moment."""

    def __init__(self, rt: Any, fail: bool = False) -> None:
        self.rt = rt
        self.fail = fail
        self.batches: list[list[Event]] = []
        self.committed_at_publish: list[int] = []
        self.original = rt.bus.publish

    async def __call__(self, events: list[Event]) -> None:
        self.batches.append(list(events))
        async with self.rt.engine.connect() as conn:
            count = (await conn.execute(select(func.count()).select_from(audit_log))).scalar_one()
        self.committed_at_publish.append(count)
        if self.fail:
            raise ConnectionError("bus down")
        await self.original(events)


@pytest.fixture
def published(rt: Any, monkeypatch: pytest.MonkeyPatch) -> Spy:
    spy = Spy(rt)
    monkeypatch.setattr(rt.bus, "publish", spy)
    return spy


@pytest.fixture
async def delivered(rt: Any) -> Any:
    """What a bus subscriber receives (through Redis on the PostgreSQL+Redis backend)."""
    seen: list[Event] = []

    async def handler(ev: Event) -> None:
        seen.append(ev)

    rt.bus.subscribe(handler)  # the Redis bus reads a stream from where it is: nothing to wait for
    yield seen
    rt.bus.unsubscribe(handler)


async def test_events_are_published_only_after_commit(rt, published, delivered):
    first = event("GUILD_UPDATE", {"id": "1"}, [1, 2])
    second = event("CHANNEL_CREATE", {"id": "2"}, [2])
    third = event("MESSAGE_CREATE", {"id": "3"}, [3])
    async with rt.uow() as uow:
        await record(uow, "guild.update", actor_id=1, guild_id=1)
        uow.emit(first)
        uow.emit(second, third)
        await asyncio.sleep(0.02)  # a Redis reader would have had time to deliver anything published
        assert published.batches == []
        assert delivered == []
    assert published.batches == [[first, second, third]]
    # At publish time the write was already committed and visible to other connections.
    assert published.committed_at_publish == [1]
    await wait_for(lambda: len(delivered) >= 3)
    # Through Redis each event arrives stamped with the id RedisBus gives it (one per publication).
    assert [ev._replace(id="") for ev in delivered] == [first, second, third]


@pytest.mark.parametrize(
    "error", [RuntimeError("boom"), AppError("perm.denied"), asyncio.CancelledError()], ids=type
)
async def test_exception_drops_events_callbacks_and_audit(rt, published, error):
    ran: list[str] = []

    async def callback() -> None:
        ran.append("after_commit")

    with pytest.raises(type(error)):
        async with rt.uow() as uow:
            await record(uow, "guild.update", actor_id=1, guild_id=1, data={"k": 1})
            uow.emit(event("GUILD_UPDATE", {"id": "1"}, [1]))
            uow.after_commit(callback)
            raise error
    assert published.batches == []
    assert ran == []
    assert await committed_audit_rows(rt) == []


async def test_committed_audit_entry_is_readable_with_all_fields(rt, clock):
    started = clock.now()
    async with rt.uow() as uow:
        entry_id = await record(
            uow,
            "role.update",
            actor_id=175928847299117063,
            target_type="role",
            target_id=175928847299117064,
            guild_id=175928847299117065,
            reason="tidy up ✓",
            data={"changes": [{"key": "name", "old": "a", "new": "b"}], "n": 3, "flag": None},
        )
        clock.advance(5)  # the unit of work keeps the time it started with
        second_id = await record(uow, "instance.settings_update", actor_id=None)
    rows = await committed_audit_rows(rt)
    assert [r.id for r in rows] == sorted([entry_id, second_id])
    row = next(r for r in rows if r.id == entry_id)
    assert row.action == "role.update"
    assert row.actor_id == 175928847299117063
    assert row.target_type == "role"
    assert row.target_id == 175928847299117064
    assert row.guild_id == 175928847299117065
    assert row.reason == "tidy up ✓"
    assert row.data == {"changes": [{"key": "name", "old": "a", "new": "b"}], "n": 3, "flag": None}
    assert as_utc(row.created_at) == started
    assert entry_id > 0 and abs(id_timestamp_ms(entry_id) / 1000 - started.timestamp()) < 3600 * 24 * 365 * 50

    other = next(r for r in rows if r.id == second_id)
    assert (other.action, other.actor_id, other.guild_id, other.target_type, other.target_id, other.reason) == (
        "instance.settings_update", None, None, None, None, None,
    )
    assert other.data == {}
    assert as_utc(other.created_at) == started


async def test_after_commit_callbacks_run_once_after_commit_in_order(rt, published):
    ran: list[str] = []

    def make(name: str) -> Any:
        async def callback() -> None:
            ran.append(name)
            # The events of the unit were handed to the bus before the side effects run.
            ran.append(f"{name}:published={len(published.batches)}")

        return callback

    async with rt.uow() as uow:
        uow.emit(event("T", {}, [1]))
        uow.after_commit(make("one"))
        uow.after_commit(make("two"))
        assert ran == []
    assert ran == ["one", "one:published=1", "two", "two:published=1"]


async def test_events_without_audience_are_not_published(rt, published):
    kept = event("MESSAGE_CREATE", {"id": "1"}, [7])
    async with rt.uow() as uow:
        uow.emit(event("NOBODY", {}, []), kept, Event("ALSO_NOBODY", {}, ()))
    assert published.batches == [[kept]]

    async with rt.uow() as uow:
        uow.emit(event("NOBODY", {}, []))
    assert published.batches == [[kept]]  # nothing left to publish: no second call


async def test_unit_without_events_does_not_publish(rt, published):
    async with rt.uow() as uow:
        await record(uow, "guild.update", actor_id=1)
    assert published.batches == []
    assert len(await committed_audit_rows(rt)) == 1


async def test_publish_failure_keeps_the_commit_and_runs_callbacks(rt, monkeypatch):
    spy = Spy(rt, fail=True)
    monkeypatch.setattr(rt.bus, "publish", spy)
    ran: list[str] = []

    async def callback() -> None:
        ran.append("after_commit")

    async with rt.uow() as uow:  # must not raise: the data is committed
        await record(uow, "guild.update", actor_id=1)
        uow.emit(event("GUILD_UPDATE", {}, [1]))
        uow.after_commit(callback)
    assert len(spy.batches) == 1
    assert len(await committed_audit_rows(rt)) == 1
    assert ran == ["after_commit"]


async def test_events_the_bus_refused_wait_in_the_outbox_and_reach_subscribers_later(rt, monkeypatch, delivered):
    """A short Redis outage after a commit: the events are kept, and published once the bus works again,
    so a gateway session that outlives the outage is not deaf to the change."""
    spy = Spy(rt, fail=True)
    monkeypatch.setattr(rt.bus, "publish", spy)
    async with rt.uow() as uow:
        uow.emit(event("GUILD_UPDATE", {"id": "7"}, [1]), event("CHANNEL_CREATE", {"id": "8"}, [2]))
    async with rt.engine.connect() as conn:
        kept = (await conn.execute(select(event_outbox.c.body).order_by(event_outbox.c.id))).scalars().all()
    assert [Event.from_json(body).type for body in kept] == ["GUILD_UPDATE", "CHANNEL_CREATE"]
    assert delivered == []

    spy.fail = False  # the bus is back: the next poll of the drain publishes them, once
    assert await OutboxDrain(rt.engine, rt.clock, rt.ids, rt.bus).drain() == 2
    await wait_for(lambda: len(delivered) == 2)
    assert [(ev.type, ev.data) for ev in delivered] == [("GUILD_UPDATE", {"id": "7"}), ("CHANNEL_CREATE", {"id": "8"})]
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(event_outbox))).scalar_one() == 0


async def test_while_refused_events_wait_later_changes_queue_behind_them_in_commit_order(rt, monkeypatch, delivered):
    """Published at once, a later change's event would overtake the earlier ones still in the outbox (an older
    USER_UPDATE arriving last wins in every client): until the drain finds the outbox empty, events join it."""
    spy = Spy(rt, fail=True)
    monkeypatch.setattr(rt.bus, "publish", spy)
    async with rt.uow() as uow:
        uow.emit(event("USER_UPDATE", {"v": 1}, [1]))
    spy.fail = False  # the bus is back before the next poll
    async with rt.uow() as uow:
        uow.emit(event("USER_UPDATE", {"v": 2}, [1]))
    assert len(spy.batches) == 1  # only the refused attempt: the second change did not go straight to the bus
    async with rt.engine.connect() as conn:
        kept = (await conn.execute(select(event_outbox.c.body).order_by(event_outbox.c.id))).scalars().all()
    assert [Event.from_json(body).data for body in kept] == [{"v": 1}, {"v": 2}]

    assert await OutboxDrain(rt.engine, rt.clock, rt.ids, rt.bus).drain() == 2
    await wait_for(lambda: len(delivered) == 2)
    assert [ev.data for ev in delivered] == [{"v": 1}, {"v": 2}]
    async with rt.uow() as uow:  # the outbox is empty: changes publish at once again
        uow.emit(event("USER_UPDATE", {"v": 3}, [1]))
    await wait_for(lambda: len(delivered) == 3)
    assert len(spy.batches) == 3  # the refused one, the drain's, this one
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(event_outbox))).scalar_one() == 0


async def test_a_drain_while_a_refused_batch_is_still_being_kept_does_not_end_the_waiting(rt, monkeypatch, delivered):
    """The drain finds the outbox empty while a refused batch is still on its way into it: later changes must
    still queue behind that batch, or they overtake it."""
    from meadhall.db import uow as uow_module

    spy = Spy(rt, fail=True)
    monkeypatch.setattr(rt.bus, "publish", spy)
    entered, go_on = asyncio.Event(), asyncio.Event()
    real = uow_module.unit_of_work

    @contextlib.asynccontextmanager
    async def slow_keep(*args, **kwargs):
        entered.set()
        await go_on.wait()  # held before its transaction: nothing of it is in the outbox yet
        async with real(*args, **kwargs) as later:
            yield later

    async def first_change() -> None:
        async with rt.uow() as uow:
            uow.emit(event("USER_UPDATE", {"v": 1}, [1]))

    monkeypatch.setattr(uow_module, "unit_of_work", slow_keep)
    writer = asyncio.create_task(first_change())
    await entered.wait()
    monkeypatch.setattr(uow_module, "unit_of_work", real)
    spy.fail = False
    assert await OutboxDrain(rt.engine, rt.clock, rt.ids, rt.bus).drain() == 0  # empty, for now
    go_on.set()
    await writer
    async with rt.uow() as uow:  # after the refused one: it must queue behind it
        uow.emit(event("USER_UPDATE", {"v": 2}, [1]))
    assert await OutboxDrain(rt.engine, rt.clock, rt.ids, rt.bus).drain() == 2
    await wait_for(lambda: len(delivered) == 2)
    assert [ev.data for ev in delivered] == [{"v": 1}, {"v": 2}]


async def test_an_undecodable_outbox_row_is_dropped_and_holds_nothing_up(rt, delivered):
    async with rt.engine.begin() as conn:
        await conn.execute(event_outbox.insert().values(created_at=rt.clock.now(), body="{not an event"))
        await conn.execute(event_outbox.insert().values(created_at=rt.clock.now(),
                                                        body=event("GUILD_UPDATE", {"id": "1"}, [1]).to_json()))
    assert await OutboxDrain(rt.engine, rt.clock, rt.ids, rt.bus).drain() == 1
    await wait_for(lambda: len(delivered) == 1)
    assert delivered[0].data == {"id": "1"}
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(event_outbox))).scalar_one() == 0


async def test_events_a_failed_publish_named_keep_their_ids_in_the_outbox(rt, monkeypatch):
    """A bus that did part of its work before failing gave the events ids (realtime/bus.py): kept under the same
    ids, the ones already in the log are numbered once per gateway session when published again."""
    named: list[str] = []

    async def half_done(events: list[Event]) -> None:
        for i, ev in enumerate(events):
            events[i] = ev._replace(id=f"id-{i}")
            named.append(events[i].id)
        raise ConnectionError("the pipeline broke after the first entry")

    monkeypatch.setattr(rt.bus, "publish", half_done)
    async with rt.uow() as uow:
        uow.emit(event("GUILD_UPDATE", {}, [1]), event("CHANNEL_CREATE", {}, [2]))
    async with rt.engine.connect() as conn:
        kept = (await conn.execute(select(event_outbox.c.body).order_by(event_outbox.c.id))).scalars().all()
    assert [Event.from_json(body).id for body in kept] == named == ["id-0", "id-1"]
    monkeypatch.undo()
    await OutboxDrain(rt.engine, rt.clock, rt.ids, rt.bus).drain()
