"""POST /channels/{id}/typing, POST /channels/{id}/ack and GET /users/@me/read-states (OpenAPI: sendTyping, ackChannel, listReadStates;
docs/reference/events.md), through HTTP."""

from __future__ import annotations

from datetime import timedelta

from meadhall.core.clock import iso
from meadhall.core.permissions import P
from tests.support.factories import insert_role, time_out
from tests.support.guilds import override, room
from tests.support.http import denied, err, invalid, not_found
from tests.support.messages import ack, events, ids, post
from tests.support.personas import hall

API = "/api/v1"


async def typing(client, account, channel_id):
    return await client.post(f"{API}/channels/{channel_id}/typing", headers=account.headers)


async def acked(client, account, channel_id, message_id=None):
    r = await ack(client, account, channel_id, message_id)
    assert r.status_code == 200, r.text
    return r.json()["read_state"]


async def states(client, account):
    r = await client.get(f"{API}/users/@me/read-states", headers=account.headers)
    assert r.status_code == 200, r.text
    return {s["channel_id"]: s for s in r.json()["read_states"]}


async def mentions_of(client, account, channel_id):
    state = (await states(client, account)).get(channel_id)
    return None if state is None else state["mention_count"]


# --- typing -------------------------------------------------------------------------------------------------

async def test_typing_reaches_every_viewer_but_the_author(client, accounts, rt, clock, capture_events):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    await capture_events.reset()
    r = await typing(client, h.a, h.general)
    assert r.status_code == 204 and r.content == b""
    assert r.headers["X-RateLimit-Bucket"] == "typing"
    [ev] = await events(capture_events, "TYPING_START")
    assert ev.users == ids(h.owner)
    assert ev.data == {"channel_id": h.general, "guild_id": h.id, "user_id": h.a.id, "timestamp": iso(clock.now())}


async def test_typing_at_most_once_per_three_seconds(client, accounts, rt, clock, capture_events):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    assert (await typing(client, h.a, h.general)).status_code == 204
    await capture_events.reset()
    r = await typing(client, h.a, h.general)
    assert r.status_code == 429 and err(r)["bucket"] == "typing" and err(r)["code"] == "rate_limited"
    assert 2.9 < err(r)["retry_after"] <= 3 and r.headers["Retry-After"] == "3"
    # The bucket is per user: another room is limited too, another user is not.
    assert (await typing(client, h.a, other["id"])).status_code == 429
    assert (await typing(client, h.b, h.general)).status_code == 204
    [ev] = await events(capture_events, "TYPING_START")
    assert ev.data["user_id"] == h.b.id
    clock.advance(2)
    assert (await typing(client, h.a, h.general)).status_code == 429
    clock.advance(1)
    assert (await typing(client, h.a, h.general)).status_code == 204


async def test_typing_needs_send_messages(client, accounts, rt, clock, capture_events):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.id, "role", deny="SEND_MESSAGES")
    await capture_events.reset()
    denied(await typing(client, h.a, h.general), "SEND_MESSAGES")
    assert await events(capture_events, "TYPING_START") == []
    assert (await typing(client, h.owner, h.general)).status_code == 204


async def test_typing_refusals(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    until = clock.now() + timedelta(minutes=5)
    await time_out(rt, h.id, h.b, until)
    r = await typing(client, h.b, h.general)
    denied(r, "SEND_MESSAGES")
    assert err(r)["timeout_until"] == iso(until)
    not_found(await typing(client, h.outsider, h.general), "channel.not_found")
    not_found(await typing(client, h.a, "42"), "channel.not_found")
    clock.advance(3)
    cat = await room(client, h.owner, h.id, name="cat", type="category")
    r = await typing(client, h.owner, cat["id"])
    assert r.status_code == 422 and err(r)["code"] == "channel.wrong_type"


# --- acknowledgements ---------------------------------------------------------------------------------------

async def test_ack_without_body_marks_the_newest_message(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await post(client, h.a, h.general, "one")
    newest = await post(client, h.a, h.general, "two")
    clock.advance(5)
    state = await acked(client, h.b, h.general)
    assert state == {"channel_id": h.general, "last_read_message_id": newest["id"], "mention_count": 0,
                     "updated_at": iso(clock.now())}
    r = await client.post(f"{API}/channels/{h.general}/ack", headers=h.b.headers)  # no body at all
    assert r.status_code == 200 and r.json()["read_state"]["last_read_message_id"] == newest["id"]
    r = await client.post(f"{API}/channels/{h.general}/ack", json={}, headers=h.b.headers)
    assert r.status_code == 200 and r.json()["read_state"]["last_read_message_id"] == newest["id"]
    assert await states(client, h.b) == {h.general: state}


async def test_ack_with_message_id_may_move_backwards(client, accounts, rt):
    h = await hall(client, accounts, rt)
    first = await post(client, h.a, h.general, "one")
    second = await post(client, h.a, h.general, "two")
    assert (await acked(client, h.b, h.general, second["id"]))["last_read_message_id"] == second["id"]
    assert (await acked(client, h.b, h.general, first["id"]))["last_read_message_id"] == first["id"]
    assert (await states(client, h.b))[h.general]["last_read_message_id"] == first["id"]


async def test_ack_refusals(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    elsewhere = await post(client, h.a, other["id"], "there")
    not_found(await ack(client, h.b, h.general, "123456789"), "message.not_found")
    not_found(await ack(client, h.b, h.general, elsewhere["id"]), "message.not_found")
    invalid(await ack(client, h.b, h.general, "not-an-id"), "message_id")
    not_found(await ack(client, h.outsider, h.general), "channel.not_found")
    await override(client, h.owner, other["id"], h.b.id, "member", deny="VIEW_CHANNEL")
    not_found(await ack(client, h.b, other["id"]), "channel.not_found")
    assert await states(client, h.b) == {}


async def test_ack_in_an_empty_room_reads_nothing(client, accounts, rt):
    h = await hall(client, accounts, rt)
    r = await room(client, h.owner, h.id, name="empty")
    [system] = [m for m in (await client.get(f"{API}/channels/{r['id']}/messages",
                                             headers=h.owner.headers)).json()["messages"]]
    assert (await client.delete(f"{API}/channels/{r['id']}/messages/{system['id']}",
                                headers=h.owner.headers)).status_code == 204
    state = await acked(client, h.a, r["id"])
    assert state["last_read_message_id"] is None and state["mention_count"] == 0


async def test_timed_out_member_may_ack(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await time_out(rt, h.id, h.b, clock.now() + timedelta(hours=1))
    assert (await acked(client, h.b, h.general))["last_read_message_id"] is not None


async def test_read_state_update_skips_the_acknowledging_session(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, "read me")
    r = await client.post(f"{API}/auth/login", json={"login": "bob", "password": h.b["password"]})
    assert r.status_code == 200, r.text
    client.cookies.clear()
    second_session = r.json()["session"]["id"]
    await capture_events.reset()
    state = await acked(client, h.b, h.general)
    [ev] = await events(capture_events, "READ_STATE_UPDATE")
    assert ev.users == ids(h.b)
    assert ev.exclude_sessions == (int(h.b["session"]["id"]),)
    assert int(second_session) not in ev.exclude_sessions
    assert ev.data == state and state["last_read_message_id"] == m["id"]


# --- mention counts -----------------------------------------------------------------------------------------

async def test_mentions_by_others_count_after_the_read_mark(client, accounts, rt):
    h = await hall(client, accounts, rt)
    assert await mentions_of(client, h.b, h.general) is None  # no row before a mention or an ack
    await post(client, h.a, h.general, f"hi <@{h.b.id}>")
    [state] = (await states(client, h.b)).values()
    assert state["mention_count"] == 1 and state["last_read_message_id"] is None
    m2 = await post(client, h.a, h.general, f"again <@{h.b.id}> <@{h.b.id}>")
    assert await mentions_of(client, h.b, h.general) == 2
    await post(client, h.a, h.general, "no mention")
    await post(client, h.b, h.general, f"talking to myself <@{h.b.id}>")
    assert await mentions_of(client, h.b, h.general) == 2
    assert (await acked(client, h.b, h.general))["mention_count"] == 0
    assert await mentions_of(client, h.b, h.general) == 0
    await post(client, h.owner, h.general, f"<@{h.b.id}> once more")
    assert await mentions_of(client, h.b, h.general) == 1
    # Moving the mark back counts the mentions after it again (m2 and the owner's).
    assert (await acked(client, h.b, h.general, m2["id"]))["mention_count"] == 1
    first = (await client.get(f"{API}/channels/{h.general}/messages", params={"after": "0", "limit": 1},
                              headers=h.b.headers)).json()["messages"][0]
    assert (await acked(client, h.b, h.general, first["id"]))["mention_count"] == 3
    # The author's own room row is not touched by mentioning others.
    assert await mentions_of(client, h.a, h.general) is None


async def test_private_message_to_the_user_counts(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await acked(client, h.b, h.general)
    await post(client, h.a, h.general, f"/ls <@{h.b.id}> psst")
    assert await mentions_of(client, h.b, h.general) == 1
    await acked(client, h.b, h.general)
    assert await mentions_of(client, h.b, h.general) == 0


async def test_private_message_mentioning_a_third_user_does_not_count_for_them(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await acked(client, h.owner, h.general)
    await post(client, h.a, h.general, f"/ls <@{h.b.id}> about <@{h.owner.id}>")
    assert await mentions_of(client, h.owner, h.general) == 0
    assert (await acked(client, h.owner, h.general))["mention_count"] == 0
    first = (await client.get(f"{API}/channels/{h.general}/messages", params={"after": "0", "limit": 1},
                              headers=h.owner.headers)).json()["messages"][0]
    assert (await acked(client, h.owner, h.general, first["id"]))["mention_count"] == 0
    assert await mentions_of(client, h.b, h.general) == 1


async def test_everyone_counts_for_viewers_when_sent_by_a_holder(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await acked(client, h.b, h.general)
    await post(client, h.a, h.general, "@everyone without the permission")
    assert await mentions_of(client, h.b, h.general) == 0
    await post(client, h.owner, h.general, "@everyone listen")
    assert await mentions_of(client, h.b, h.general) == 1
    assert await mentions_of(client, h.a, h.general) == 1  # a row appears for viewers who had none
    assert await mentions_of(client, h.owner, h.general) is None  # not the author
    await insert_role(rt, clock, h.id, 9101, P.MENTION_EVERYONE, 1, holders=[h.a])
    await post(client, h.a, h.general, f"@everyone and <@{h.b.id}>")
    assert await mentions_of(client, h.b, h.general) == 2
    assert (await acked(client, h.b, h.general))["mention_count"] == 0


async def test_mentions_do_not_create_rows_for_users_who_cannot_view_the_room(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    m = await post(client, h.a, h.general, f"<@{h.b.id}> <@{h.outsider.id}>")
    assert m["mentions"] == [h.b.id, h.outsider.id]
    assert await states(client, h.b) == {}
    assert await states(client, h.outsider) == {}


async def test_system_messages_are_not_mentions(client, accounts, rt):
    h = await hall(client, accounts, rt)
    first = (await client.get(f"{API}/channels/{h.general}/messages", params={"after": "0", "limit": 1},
                              headers=h.b.headers)).json()["messages"][0]
    assert first["kind"] == "system"
    assert (await acked(client, h.b, h.general, first["id"]))["mention_count"] == 0


async def test_read_states_list_every_room(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    await post(client, h.a, other["id"], f"<@{h.b.id}>")
    general_state = await acked(client, h.b, h.general)
    listed = await states(client, h.b)
    assert set(listed) == {h.general, other["id"]}
    assert listed[h.general] == general_state
    assert listed[other["id"]]["mention_count"] == 1 and listed[other["id"]]["last_read_message_id"] is None
    r = await client.get(f"{API}/users/@me/read-states", headers=h.b.headers)
    assert [s["channel_id"] for s in r.json()["read_states"]] == sorted(listed, key=int)
    assert set(r.json()["read_states"][0]) == {"channel_id", "last_read_message_id", "mention_count", "updated_at"}
    assert await states(client, h.outsider) == {}
    assert (await client.get(f"{API}/users/@me/read-states")).status_code == 401


async def test_ack_with_null_message_id_marks_the_newest(client, accounts, rt):
    h = await hall(client, accounts, rt)
    newest = await post(client, h.a, h.general, "latest")
    r = await client.post(f"{API}/channels/{h.general}/ack", json={"message_id": None}, headers=h.b.headers)
    assert r.status_code == 200 and r.json()["read_state"]["last_read_message_id"] == newest["id"]


async def test_deleting_an_unread_mention_lowers_the_count(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await acked(client, h.a, h.general)
    first = await post(client, h.owner, h.general, f"<@{h.b.id}> one")
    second = await post(client, h.owner, h.general, f"<@{h.b.id}> two")
    everyone = await post(client, h.owner, h.general, "@everyone three")
    assert await mentions_of(client, h.b, h.general) == 3
    assert await mentions_of(client, h.a, h.general) == 1
    assert (await client.delete(f"{API}/channels/{h.general}/messages/{everyone['id']}",
                                headers=h.owner.headers)).status_code == 204
    assert await mentions_of(client, h.b, h.general) == 2
    assert await mentions_of(client, h.a, h.general) == 0
    # A mention already read past stays out of the count when deleted.
    await acked(client, h.b, h.general, first["id"])
    assert await mentions_of(client, h.b, h.general) == 1
    assert (await client.delete(f"{API}/channels/{h.general}/messages/{first['id']}",
                                headers=h.owner.headers)).status_code == 204
    assert await mentions_of(client, h.b, h.general) == 1
    assert (await client.delete(f"{API}/channels/{h.general}/messages/{second['id']}",
                                headers=h.owner.headers)).status_code == 204
    assert await mentions_of(client, h.b, h.general) == 0
    # The count agrees with a recount from the oldest message.
    oldest = (await client.get(f"{API}/channels/{h.general}/messages", params={"after": "0", "limit": 1},
                               headers=h.b.headers)).json()["messages"][0]
    assert (await acked(client, h.b, h.general, oldest["id"]))["mention_count"] == 0


async def test_deleting_a_private_message_lowers_the_recipients_count(client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, f"/ls <@{h.b.id}> about <@{h.owner.id}>")
    assert await mentions_of(client, h.b, h.general) == 1
    await acked(client, h.owner, h.general)
    assert (await client.delete(f"{API}/channels/{h.general}/messages/{m['id']}",
                                headers=h.a.headers)).status_code == 204
    assert await mentions_of(client, h.b, h.general) == 0
    assert await mentions_of(client, h.owner, h.general) == 0
