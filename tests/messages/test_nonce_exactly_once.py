"""A retried send never creates a second message (docs/mentions.md, "Repeated sends"; OpenAPI: sendMessage): the
nonce is a key written in the send's own transaction, so a retry within 5 minutes is answered 200 with the first
message on any node, whenever the node of the first attempt died and whatever its store (Redis) holds; concurrent
sends with one nonce make one message; a send that failed leaves no key; the key expires after 5 minutes and is then
taken over; a repeat is still refused when the author lost SEND_MESSAGES; the sweep deletes old keys; and the key
costs the 201 path one statement."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from argon2 import PasswordHasher
from sqlalchemy import select

from meadhall.app import create_app
from meadhall.db.schema.messages import message_nonces
from meadhall.runtime import Runtime
from tests.support.factories import message_count
from tests.support.files import attached
from tests.support.guilds import override, room
from tests.support.http import denied, invalid
from tests.support.messages import ack, events, history, post, send
from tests.support.personas import hall
from tests.support.shapes import MESSAGE_FIELDS


@asynccontextmanager
async def node_after_a_crash(settings: Any, clock: Any) -> AsyncIterator[httpx.AsyncClient]:
    """Another node on the same database whose shared store holds nothing the first node wrote (with Redis: a key
    prefix of its own), as when the first node died after its commit and before any write to Redis."""
    other = Runtime(settings, clock=clock, redis_prefix=f"test-{uuid.uuid4().hex[:12]}")
    other.password_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await other.start(run_migrations=False)
    try:
        transport = httpx.ASGITransport(app=create_app(settings, other), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield client
    finally:
        await other.close()


async def keys(rt: Runtime) -> list[tuple[int, int, str]]:
    async with rt.engine.connect() as conn:
        rows = await conn.execute(select(message_nonces.c.channel_id, message_nonces.c.author_id,
                                         message_nonces.c.nonce).order_by(message_nonces.c.nonce))
        return [tuple(r) for r in rows]


async def test_a_retry_on_another_node_answers_the_first_message(client, accounts, rt, settings, clock,
                                                                 capture_events):
    h = await hall(client, accounts, rt)
    start = await post(client, h.owner, h.general, "the read mark")
    first = await post(client, h.a, h.general, f"hi <@{h.b.id}>", nonce="retry-1")
    count = await message_count(rt, h.general)
    await capture_events.reset()
    clock.advance(60)
    async with node_after_a_crash(settings, clock) as other:
        r = await send(other, h.a, h.general, f"hi <@{h.b.id}>", nonce="retry-1")
        assert r.status_code == 200, r.text
        again = r.json()["message"]
        assert set(again) == MESSAGE_FIELDS and again == first  # the same shape and content as the 201
        # Even a different body: the key, not the content, names the message.
        r = await send(other, h.a, h.general, "something else", nonce="retry-1")
        assert r.status_code == 200 and r.json()["message"]["id"] == first["id"]
    assert await message_count(rt, h.general) == count
    assert await events(capture_events, "MESSAGE_CREATE") == []
    # The mention counted once (the retries raised nothing).
    r = await ack(client, h.b, h.general, start["id"])
    assert r.json()["read_state"]["mention_count"] == 1, r.text


async def test_concurrent_sends_with_one_nonce_make_one_message(client, accounts, rt, settings, clock, backend):
    h = await hall(client, accounts, rt)
    count = await message_count(rt, h.general)

    async def attempts(clients: list[Any]) -> list[Any]:
        return await asyncio.gather(*(send(c, h.a, h.general, f"try {i}", nonce="burst")
                                      for i, c in enumerate(clients)))

    if backend == "postgres":  # two nodes, each its own connections: the key's insert waits for the other's commit
        async with node_after_a_crash(settings, clock) as other:
            answers = await attempts([client, other] * 4)
    else:  # one writer at a time on SQLite: the same on one node
        answers = await attempts([client] * 8)
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [200] * 7 + [201], [r.text for r in answers]
    assert len({r.json()["message"]["id"] for r in answers}) == 1
    assert await message_count(rt, h.general) == count + 1
    assert await keys(rt) == [(int(h.general), int(h.a.id), "burst")]


async def test_after_five_minutes_the_nonce_is_a_new_message_and_its_key_moves(client, accounts, rt, settings,
                                                                               clock):
    h = await hall(client, accounts, rt)
    first = await post(client, h.a, h.general, "first", nonce="late")
    clock.advance(299)
    r = await send(client, h.a, h.general, "first", nonce="late")
    assert r.status_code == 200 and r.json()["message"]["id"] == first["id"]
    clock.advance(2)
    async with node_after_a_crash(settings, clock) as other:
        second = await post(other, h.a, h.general, "second", nonce="late")
        assert second["id"] != first["id"] and second["content"] == "second"
        # The key now names the second message, on every node.
        clock.advance(10)
        r = await send(client, h.a, h.general, "again", nonce="late")
        assert r.status_code == 200 and r.json()["message"]["id"] == second["id"]
    assert await keys(rt) == [(int(h.general), int(h.a.id), "late")]


async def test_the_same_nonce_of_another_author_or_room_is_another_message(client, accounts, rt, settings, clock):
    h = await hall(client, accounts, rt)
    other_room = await room(client, h.owner, h.id, name="other")
    first = await post(client, h.a, h.general, "mine", nonce="shared")
    async with node_after_a_crash(settings, clock) as other:
        by_b = await post(other, h.b, h.general, "yours", nonce="shared")
        elsewhere = await post(other, h.a, other_room["id"], "there", nonce="shared")
    assert len({first["id"], by_b["id"], elsewhere["id"]}) == 3
    assert len(await keys(rt)) == 3


async def test_a_refused_send_leaves_no_key(client, accounts, rt):
    h = await hall(client, accounts, rt)
    invalid(await send(client, h.a, h.general, "re", nonce="fix-it", reply_to_id="123456789"), "reply_to_id")
    assert await keys(rt) == []
    # The corrected retry is the first message (201), not an answer naming nothing.
    fixed = await post(client, h.a, h.general, "fixed", nonce="fix-it")
    assert fixed["content"] == "fixed"


async def test_a_repeat_is_refused_once_the_author_may_no_longer_send(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await post(client, h.a, h.general, "before", nonce="then")
    await override(client, h.owner, h.general, h.a.id, "member", deny="SEND_MESSAGES")
    denied(await send(client, h.a, h.general, "before", nonce="then"), "SEND_MESSAGES")


async def test_a_repeat_with_an_attachment_answers_the_first_message_and_its_file(client, accounts, rt):
    h = await hall(client, accounts, rt)
    file = await attached(client, h.a, h.general)
    first = await post(client, h.a, h.general, "see this", nonce="with-file", attachment_ids=[file["id"]])
    assert first["attachment_ids"] == [file["id"]]
    r = await send(client, h.a, h.general, "see this", nonce="with-file", attachment_ids=[file["id"]])
    assert r.status_code == 200 and r.json()["message"] == first
    [listed] = [m for m in (await history(client, h.b, h.general))["messages"] if m["id"] == first["id"]]
    assert listed["attachments"] == first["attachments"]


async def test_the_sweep_deletes_keys_older_than_five_minutes(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await post(client, h.a, h.general, "one", nonce="old")
    clock.advance(30)
    await post(client, h.a, h.general, "two", nonce="recent")
    assert [k[2] for k in await keys(rt)] == ["old", "recent"]  # within the minute: no sweep yet
    clock.advance(290)  # "old" is 320 s old, "recent" 290 s
    await post(client, h.a, h.general, "three", nonce="new")
    assert [k[2] for k in await keys(rt)] == ["new", "recent"]
    # A send without a nonce neither writes nor sweeps keys.
    clock.advance(600)
    await post(client, h.a, h.general, "four")
    assert [k[2] for k in await keys(rt)] == ["new", "recent"]


async def test_the_key_costs_the_send_one_statement(client, accounts, rt, assert_query_count):
    h = await hall(client, accounts, rt)
    await post(client, h.a, h.general, "warm", nonce="warm")  # this minute's sweep is done
    with assert_query_count(100) as plain:
        await post(client, h.a, h.general, "plain")
    with assert_query_count(100) as keyed:
        await post(client, h.a, h.general, "keyed", nonce="keyed")
    assert len(keyed) == len(plain) + 1
    [extra] = [s for s in keyed if s not in plain]
    assert "message_nonces" in extra and extra.lstrip().upper().startswith("INSERT")
