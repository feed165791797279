"""Mention counts of an acknowledgement (OpenAPI: ackChannel, listReadStates; docs/mentions.md):
every kind of mention is counted after the read mark from the mention tables written with each message, edits
keep a message's mentions, deleted messages (one, or a whole room) no longer count, READY carries the counts an
acknowledgement stored, and the count reads index ranges of those tables, never a range of the room's messages."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event as sa_event
from sqlalchemy import func, select

from meadhall.core.permissions import P
from meadhall.db.schema.messages import everyone_mentions, user_mentions
from tests.support.factories import insert_role
from tests.support.http import API
from tests.support.messages import ack, delete_message, edit_message, post
from tests.support.personas import hall


async def count_after(client: Any, account: Any, channel_id: str, message_id: str | None) -> int:
    """The mention count an acknowledgement at `message_id` stores."""
    r = await ack(client, account, channel_id, message_id)
    assert r.status_code == 200, r.text
    return int(r.json()["read_state"]["mention_count"])


async def first_message(client: Any, h: Any) -> str:
    """A message before everything a test sends: the read mark they are all counted after."""
    return str((await post(client, h.owner, h.general, "the start"))["id"])


async def test_each_kind_of_mention_counts_once_after_the_mark(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    start = await first_message(client, h)
    await post(client, h.owner, h.general, f"<@{h.a.id}> hello")  # 1: a user mention
    await post(client, h.b, h.general, f"<@{h.a.id}> <@{h.a.id}> twice in one message")  # 2: one message
    await post(client, h.owner, h.general, "@everyone listen")  # 3: @everyone by a holder
    await post(client, h.owner, h.general, f"@everyone and <@{h.a.id}>")  # 4: counted once
    await post(client, h.owner, h.general, f"/ls <@{h.a.id}> psst")  # 5: a private message to a
    await post(client, h.b, h.general, "@everyone without the permission")
    await post(client, h.owner, h.general, f"/ls <@{h.b.id}> about <@{h.a.id}>")  # a cannot see it
    await post(client, h.a, h.general, f"<@{h.a.id}> myself")
    await insert_role(rt, clock, h.id, 9201, P.MENTION_EVERYONE, 1, holders=[h.a])
    await post(client, h.a, h.general, "@everyone from a")  # the author's own @everyone
    await post(client, h.owner, h.general, f"<@&{h.id}> a role token is no user mention")

    assert await count_after(client, h.a, h.general, start) == 5
    assert await count_after(client, h.b, h.general, start) == 4  # the three @everyone and the private one
    assert await count_after(client, h.owner, h.general, start) == 1  # a's @everyone
    assert await count_after(client, h.a, h.general, None) == 0


async def test_the_count_is_of_mentions_after_the_mark_only(client, accounts, rt):
    h = await hall(client, accounts, rt)
    start = await first_message(client, h)
    sent = [await post(client, h.owner, h.general, f"<@{h.a.id}> {i}") for i in range(4)]
    everyone = await post(client, h.owner, h.general, "@everyone")
    assert await count_after(client, h.a, h.general, start) == 5
    assert await count_after(client, h.a, h.general, sent[1]["id"]) == 3
    assert await count_after(client, h.a, h.general, sent[3]["id"]) == 1
    assert await count_after(client, h.a, h.general, everyone["id"]) == 0


async def test_a_webhook_message_mentions_like_any_other(client, accounts, rt):
    """A webhook's message has no author; its `<@user>` mentions count (docs/webhooks.md)."""
    h = await hall(client, accounts, rt)
    start = await first_message(client, h)
    r = await client.post(f"{API}/channels/{h.general}/webhooks", json={"name": "Deploys"}, headers=h.owner.headers)
    assert r.status_code == 201, r.text
    hook = r.json()["webhook"]
    r = await client.post(f"{API}/webhooks/{hook['id']}/{hook['token']}", json={"content": f"<@{h.a.id}> deployed"})
    assert r.status_code == 201, r.text
    assert await count_after(client, h.a, h.general, start) == 1
    assert await count_after(client, h.b, h.general, start) == 0


async def test_an_edit_keeps_the_mentions_the_message_was_sent_with(client, accounts, rt):
    """No command parsing on edit (OpenAPI: editMessage): `mentions` stays as sent, and the count with it."""
    h = await hall(client, accounts, rt)
    start = await first_message(client, h)
    added = await post(client, h.owner, h.general, "nobody yet")
    removed = await post(client, h.owner, h.general, f"<@{h.a.id}> first")
    assert (await edit_message(client, h.owner, h.general, added["id"], f"now <@{h.a.id}>"))["mentions"] == []
    assert (await edit_message(client, h.owner, h.general, removed["id"], "nobody"))["mentions"] == [h.a.id]
    assert await count_after(client, h.a, h.general, start) == 1


async def test_deleted_messages_no_longer_count(client, accounts, rt):
    h = await hall(client, accounts, rt)
    start = await first_message(client, h)
    named = await post(client, h.owner, h.general, f"<@{h.a.id}> one")
    everyone = await post(client, h.owner, h.general, "@everyone two")
    private = await post(client, h.owner, h.general, f"/ls <@{h.a.id}> three")
    await post(client, h.owner, h.general, f"<@{h.a.id}> four")
    assert await count_after(client, h.a, h.general, start) == 4
    for message in (named, everyone, private):
        await delete_message(client, h.owner, h.general, message["id"])
    assert await count_after(client, h.a, h.general, start) == 1
    assert await mention_rows(rt, h.general) == (1, 0)


async def test_a_deleted_room_takes_its_mentions_with_it(client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await client.post(f"{API}/guilds/{h.id}/channels", json={"name": "doomed", "type": "text"},
                          headers=h.owner.headers)
    doomed = r.json()["channel"]["id"]
    await post(client, h.owner, doomed, f"<@{h.a.id}> and <@{h.b.id}>")
    await post(client, h.owner, doomed, "@everyone")
    assert await mention_rows(rt, doomed) == (2, 1)
    r = await client.delete(f"{API}/channels/{doomed}", headers=h.owner.headers)
    assert r.status_code in (200, 204), r.text
    assert await mention_rows(rt, doomed) == (0, 0)


async def test_ready_carries_the_count_an_acknowledgement_stored(client, accounts, rt, gateway):
    h = await hall(client, accounts, rt)
    start = await first_message(client, h)
    await post(client, h.owner, h.general, f"<@{h.a.id}> one")
    await post(client, h.owner, h.general, "@everyone two")
    await ack(client, h.a, h.general)
    assert await count_after(client, h.a, h.general, start) == 2
    ready = await (await gateway.connect()).identify(h.a["token"])
    [state] = [s for s in ready["read_states"] if s["channel_id"] == h.general]
    assert state["mention_count"] == 2 and state["last_read_message_id"] == start


async def mention_rows(rt: Any, channel_id: str) -> tuple[int, int]:
    """(user_mentions rows, everyone_mentions rows) of a room."""
    async with rt.engine.connect() as conn:
        named = await conn.scalar(select(func.count()).select_from(user_mentions)
                                  .where(user_mentions.c.channel_id == int(channel_id)))
        everyone = await conn.scalar(select(func.count()).select_from(everyone_mentions)
                                     .where(everyone_mentions.c.channel_id == int(channel_id)))
    return int(named or 0), int(everyone or 0)


# ---- the cost: index ranges of the mention tables ----------------------------------------------------------


async def plans_of_an_ack(client: Any, rt: Any, account: Any, channel_id: str, message_id: str) -> list[str]:
    """The query plan of every statement an acknowledgement runs, each as one text."""
    statements: list[tuple[str, Any]] = []

    def on_execute(_conn, _cursor, statement, params, _ctx, _many):  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")):
            statements.append((statement, params))

    sa_event.listen(rt.engine.sync_engine, "before_cursor_execute", on_execute)
    try:
        assert await count_after(client, account, channel_id, message_id) >= 1
    finally:
        sa_event.remove(rt.engine.sync_engine, "before_cursor_execute", on_execute)
    plans = []
    async with rt.engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        if not sqlite:  # tables of a few rows: a sequential scan would be cheaper, and hide the index
            await conn.exec_driver_sql("SET enable_seqscan = off")
        for statement, params in statements:
            explain = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN "
            rows = (await conn.exec_driver_sql(explain + statement, params)).all()
            plans.append("\n".join(str(r[-1]) for r in rows))
        await conn.rollback()
    return plans


async def test_an_acknowledgement_counts_by_index_ranges_not_over_the_rooms_messages(client, accounts, rt):
    h = await hall(client, accounts, rt)
    start = await first_message(client, h)
    for i in range(20):
        await chatter(client, h, i)
    plans = await plans_of_an_ack(client, rt, h.a, h.general, start)
    counting = [p for p in plans if "user_mentions" in p or "pk_user_mentions" in p]
    assert counting, "no statement of the acknowledgement reads user_mentions:\n" + "\n\n".join(plans)
    for plan in counting:  # the count before the write, and the few mentions sent since, in the write
        if rt.engine.dialect.name == "sqlite":
            assert "SEARCH user_mentions USING PRIMARY KEY (user_id=? AND channel_id=? AND message_id>?" in plan, plan
            assert "SEARCH everyone_mentions USING PRIMARY KEY (channel_id=? AND message_id>?" in plan, plan
        else:
            assert "pk_user_mentions" in plan and "pk_everyone_mentions" in plan, plan
    if rt.engine.dialect.name == "sqlite":
        ranges_of_messages = [p for p in plans if "SCAN messages" in p or "messages USING" in p and "id>?" in p]
    else:
        ranges_of_messages = [p for p in plans if "on messages" in p and "(id > " in p]
    # Other statements may read the room's newest message or one message by id, never the messages after the mark.
    assert ranges_of_messages == [], "\n\n".join(ranges_of_messages)


async def chatter(client: Any, h: Any, i: int) -> None:
    """Messages of the room, some mentioning `a` (the send bucket allows 10 per user: three authors)."""
    author = (h.owner, h.b, h.a)[i % 3]
    await post(client, author, h.general, f"<@{h.a.id}> {i}" if i % 4 == 0 else f"plain {i}")

