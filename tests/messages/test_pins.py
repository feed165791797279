"""Pins (OpenAPI: pinMessage, unpinMessage, listPins; docs/reference/events.md; docs/reference/limits.md): pin, unpin, list, limit, permissions, events and audit, over HTTP."""

from __future__ import annotations

from sqlalchemy import insert, select, update

from meadhall.core import permissions as perms
from meadhall.core.clock import iso
from meadhall.db.schema import audit_log, messages
from tests.support.factories import add_member, insert_role
from tests.support.http import err
from tests.support.messages import message_of, pin, post, unpin
from tests.support.personas import gathering

API = "/api/v1"


async def pinned_ids(client, account, channel_id):
    r = await client.get(f"{API}/channels/{channel_id}/pins", headers=account.headers)
    assert r.status_code == 200, r.text
    return [m["id"] for m in r.json()["messages"]]


async def pin_audit(rt):
    async with rt.engine.connect() as conn:
        stmt = select(audit_log).where(audit_log.c.action.in_(["message.pin", "message.unpin"])).order_by(audit_log.c.id)
        return list((await conn.execute(stmt)).mappings())


async def insert_messages(rt, clock, guild_id, channel_id, author_id, count, *, pinned):
    rows = [{"id": 5_000_000 + i, "channel_id": int(channel_id), "guild_id": int(guild_id), "author_id": int(author_id),
             "content": f"m{i}", "content_norm": f"m{i}", "kind": "normal", "mentions": [], "mention_channels": [],
             "mention_everyone": False, "suppress_embeds": False, "pinned": pinned,
             "pinned_at": clock.now() if pinned else None, "created_at": clock.now()} for i in range(count)]
    async with rt.engine.begin() as conn:
        await conn.execute(insert(messages), rows)
    return [str(r["id"]) for r in rows]


async def test_pin_is_idempotent_with_event_and_audit(client, accounts, rt, clock, capture_events):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    m = await post(client, b, ch)
    await capture_events.reset()
    await pin(client, a, ch, m["id"])
    await pin(client, a, ch, m["id"])
    await capture_events.settle()
    [ev] = capture_events.of_type("CHANNEL_PINS_UPDATE")
    assert ev.data == {"channel_id": ch, "guild_id": guild["id"], "message_id": m["id"], "pinned": True,
                       "last_pin_timestamp": iso(clock.now())}
    assert set(ev.users) == {int(a.id), int(b.id)}
    [entry] = await pin_audit(rt)
    assert (entry["action"], entry["actor_id"], entry["target_type"], entry["target_id"], entry["guild_id"]) == (
        "message.pin", int(a.id), "message", int(m["id"]), int(guild["id"]))
    assert entry["data"] == {"channel_id": ch}
    assert (await message_of(client, b, ch, m["id"]))["pinned"] is True
    assert await pinned_ids(client, b, ch) == [m["id"]]


async def test_pins_most_recently_pinned_first_and_unpin(client, accounts, rt, clock, capture_events):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    m1, m2, m3 = [await post(client, a, ch, f"m{i}") for i in range(3)]
    await pin(client, a, ch, m2["id"])
    second_at = clock.advance(10)
    await pin(client, a, ch, m3["id"])
    clock.advance(10)
    await pin(client, a, ch, m1["id"])
    assert await pinned_ids(client, b, ch) == [m1["id"], m3["id"], m2["id"]]
    clock.advance(10)
    await capture_events.reset()
    await unpin(client, a, ch, m1["id"])
    await capture_events.settle()
    [ev] = capture_events.of_type("CHANNEL_PINS_UPDATE")
    assert ev.data["pinned"] is False and ev.data["message_id"] == m1["id"]
    assert ev.data["last_pin_timestamp"] == iso(second_at)
    assert set(ev.users) == {int(a.id), int(b.id)}
    assert await pinned_ids(client, b, ch) == [m3["id"], m2["id"]]
    assert (await message_of(client, b, ch, m1["id"]))["pinned"] is False
    r = await unpin(client, a, ch, m1["id"], expect=404)
    assert err(r)["code"] == "pin.not_found"
    await unpin(client, a, ch, m3["id"])
    await capture_events.reset()
    await unpin(client, a, ch, m2["id"])
    await capture_events.settle()
    [ev] = capture_events.of_type("CHANNEL_PINS_UPDATE")
    assert ev.data["last_pin_timestamp"] is None
    actions = [(e["action"], str(e["target_id"])) for e in await pin_audit(rt)]
    assert actions == [("message.pin", m2["id"]), ("message.pin", m3["id"]), ("message.pin", m1["id"]),
                       ("message.unpin", m1["id"]), ("message.unpin", m3["id"]), ("message.unpin", m2["id"])]
    # Pinning again after an unpin is a new pin.
    await pin(client, a, ch, m1["id"])
    assert await pinned_ids(client, a, ch) == [m1["id"]]


async def test_unpin_of_a_message_never_pinned_is_404(client, accounts, rt):
    _, ch, (a,) = await gathering(client, accounts, rt)
    m = await post(client, a, ch)
    r = await unpin(client, a, ch, m["id"], expect=404)
    assert err(r)["code"] == "pin.not_found"
    assert await pin_audit(rt) == []


async def test_fifty_pins_per_room(client, accounts, rt, clock):
    guild, ch, (a,) = await gathering(client, accounts, rt)
    await insert_messages(rt, clock, guild["id"], ch, a.id, 50, pinned=True)
    m = await post(client, a, ch)
    r = await pin(client, a, ch, m["id"], expect=409)
    assert err(r)["code"] == "pin.limit_reached"
    assert len(await pinned_ids(client, a, ch)) == 50
    await pin(client, a, ch, "5000000")  # already pinned: idempotent even at the limit
    await unpin(client, a, ch, "5000000")
    await pin(client, a, ch, m["id"])
    # The limit is per room.
    r = await client.post(f"{API}/guilds/{guild['id']}/channels", json={"name": "other", "type": "text"},
                          headers=a.headers)
    other = r.json()["channel"]["id"]
    await pin(client, a, other, (await post(client, a, other))["id"])


async def test_manage_messages_needed_to_change_pins(client, accounts, rt):
    _, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    m = await post(client, b, ch)
    r = await pin(client, b, ch, m["id"], expect=403)
    assert err(r)["code"] == "perm.denied" and err(r)["permission"] == "MANAGE_MESSAGES"
    await pin(client, a, ch, m["id"])
    r = await unpin(client, b, ch, m["id"], expect=403)
    assert err(r)["permission"] == "MANAGE_MESSAGES"
    assert await pinned_ids(client, b, ch) == [m["id"]]


async def test_private_and_system_messages_cannot_be_pinned(client, accounts, rt):
    _, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    private = await post(client, a, ch, f"/ls <@{b.id}> secret")
    r = await client.get(f"{API}/channels/{ch}/messages", headers=a.headers)
    system = next(m for m in r.json()["messages"] if m["kind"] == "system")
    for mid in (private["id"], system["id"]):
        r = await pin(client, a, ch, mid, expect=422)
        assert err(r)["code"] == "validation.failed"
        assert err(r)["details"][0]["field"] == "message_id"
    assert await pinned_ids(client, a, ch) == []


async def test_list_shows_private_messages_only_to_their_parties(client, accounts, rt, clock):
    _, ch, (a, b, c) = await gathering(client, accounts, rt, "bob", "carol")
    private = await post(client, a, ch, f"/ls <@{b.id}> secret")
    public = await post(client, a, ch, "open")
    await pin(client, a, ch, public["id"])
    async with rt.engine.begin() as conn:  # a pin kept from before the rule
        await conn.execute(update(messages).where(messages.c.id == int(private["id"]))
                           .values(pinned=True, pinned_at=clock.advance(5)))
    assert await pinned_ids(client, a, ch) == [private["id"], public["id"]]
    assert await pinned_ids(client, b, ch) == [private["id"], public["id"]]
    assert await pinned_ids(client, c, ch) == [public["id"]]


async def test_unseen_rooms_and_messages_are_404(client, accounts, rt, clock):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    outsider = await accounts.register("mallory")
    m = await post(client, a, ch)
    private = await post(client, a, ch, f"/ls <@{b.id}> secret")
    r = await client.post(f"{API}/guilds/{guild['id']}/channels", json={"name": "other", "type": "text"},
                          headers=a.headers)
    other = r.json()["channel"]["id"]
    elsewhere = await post(client, a, other)
    r = await client.get(f"{API}/channels/{ch}/pins", headers=outsider.headers)
    assert r.status_code == 404 and err(r)["code"] == "channel.not_found"
    r = await pin(client, outsider, ch, m["id"], expect=404)
    assert err(r)["code"] == "channel.not_found"
    for mid in (elsewhere["id"], "123", "x"):
        r = await pin(client, a, ch, mid, expect=404)
        assert err(r)["code"] == "message.not_found", mid
    # carol holds MANAGE_MESSAGES through a role yet cannot see the others' private message.
    carol = await accounts.register("carol")
    await _moderator(rt, clock, guild, carol)
    for call in (pin, unpin):
        r = await call(client, carol, ch, private["id"], expect=404)
        assert err(r)["code"] == "message.not_found"


async def _moderator(rt, clock, guild, account):
    """`account` joins and holds a role granting MANAGE_MESSAGES."""
    await add_member(rt, guild["id"], account)
    await insert_role(rt, clock, guild["id"], 900_001, perms.P.MANAGE_MESSAGES, 1, holders=[account])


async def test_moderator_role_may_pin(client, accounts, rt, clock):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    dave = await accounts.register("dave")
    await _moderator(rt, clock, guild, dave)
    m = await post(client, b, ch)
    await pin(client, dave, ch, m["id"])
    await unpin(client, dave, ch, m["id"])
    assert [(e["action"], e["actor_id"]) for e in await pin_audit(rt)] == [
        ("message.pin", int(dave.id)), ("message.unpin", int(dave.id))]


async def test_list_needs_read_message_history(client, accounts, rt):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    r = await client.put(f"{API}/channels/{ch}/permissions/{guild['id']}",
                         json={"type": "role", "deny": "READ_MESSAGE_HISTORY"}, headers=a.headers)
    assert r.status_code == 204, r.text
    r = await client.get(f"{API}/channels/{ch}/pins", headers=b.headers)
    assert r.status_code == 403 and err(r)["permission"] == "READ_MESSAGE_HISTORY"


async def test_list_runs_a_fixed_number_of_queries(client, accounts, rt, clock, assert_query_count):
    guild, ch, (a,) = await gathering(client, accounts, rt)
    await insert_messages(rt, clock, guild["id"], ch, a.id, 2, pinned=True)
    await pinned_ids(client, a, ch)  # the first request of a session does more (its last use is written)
    with assert_query_count(100) as few:
        await pinned_ids(client, a, ch)
    async with rt.engine.begin() as conn:
        await conn.execute(update(messages).where(messages.c.channel_id == int(ch)).values(pinned=True,
                                                                                         pinned_at=clock.now()))
    with assert_query_count(100) as many:
        assert len(await pinned_ids(client, a, ch)) >= 3
    assert len(many) == len(few)
