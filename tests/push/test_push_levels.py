"""Web Push follows the notification levels (docs/push.md, "How push follows the levels"): the effective level
of a room (its own unless `default`, else its server's), mutes that count as `nothing` until they run out,
`@everyone` suppressed per server, a conversation's default `all`, and `all` sending every message of a room only
to those who may view it, within the 20 a minute. Nobody choosing `all` costs one statement per message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from meadhall.messages.sent_hooks import SentMessage
from meadhall.push.delivery import deliveries_of
from meadhall.push.settings.recipients import push_recipients
from tests.support.conversations import group, open_dm
from tests.support.factories import add_member
from tests.support.guilds import override, room
from tests.support.messages import post
from tests.support.personas import Hall, hall
from tests.support.push import subscribe

SETTINGS = "/users/@me/notification-settings"
START = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def at(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def set_guild(api: Any, who: Any, guild_id: str, level: str, **more: Any) -> None:
    await api.put(f"{SETTINGS}/guilds/{guild_id}", who, json={"level": level, **more}, expect=200)


async def set_channel(api: Any, who: Any, channel_id: str, level: str, **more: Any) -> None:
    await api.put(f"{SETTINGS}/channels/{channel_id}", who, json={"level": level, **more}, expect=200)


async def pushed(client: Any, rt: Any, push_service: Any, sender: Any, channel_id: str, text: str) -> list[str]:
    """The endpoint paths (one per subscribed user, named after them) a message sent now reaches, sorted."""
    push_service.requests.clear()
    await post(client, sender, channel_id, text)
    await deliveries_of(rt).idle()
    return sorted(r["path"] for r in push_service.received())


async def subscribed_hall(api: Any, client: Any, accounts: Any, rt: Any, push_service: Any) -> Hall:
    h = await hall(client, accounts, rt)
    for who, path in ((h.owner, "/owner"), (h.a, "/alice"), (h.b, "/bob"), (h.outsider, "/outsider")):
        await subscribe(api, who, push_service, path)
    return h


async def test_all_sends_every_message_of_the_room_and_the_default_only_mentions(api, client, accounts, rt,
                                                                                push_service):
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    await set_guild(api, h.a, h.id, "all")
    await set_guild(api, h.owner, h.id, "all")  # the author: never for their own message

    assert await pushed(client, rt, push_service, h.owner, h.general, "dinner is ready") == ["/alice"]
    assert await pushed(client, rt, push_service, h.owner, h.general, f"<@{h.b.id}> and you") == ["/alice", "/bob"]
    # A webhook's message is a message of the room too.
    hook = (await api.post(f"/channels/{h.general}/webhooks", h.owner, json={"name": "Deploys"}, expect=201))["webhook"]
    push_service.requests.clear()
    r = await client.post(f"/api/v1/webhooks/{hook['id']}/{hook['token']}", json={"content": "shipped"})
    assert r.status_code == 201, r.text
    await deliveries_of(rt).idle()
    assert sorted(r["path"] for r in push_service.received()) == ["/alice", "/owner"]


async def test_the_rooms_level_wins_unless_default(api, client, accounts, rt, push_service):
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    kitchen = await room(client, h.owner, h.id, name="kitchen")
    await set_guild(api, h.a, h.id, "nothing")
    await set_channel(api, h.a, h.general, "all")  # louder than the server
    await set_guild(api, h.b, h.id, "all")
    await set_channel(api, h.b, h.general, "mentions")  # quieter than the server
    await set_channel(api, h.b, kitchen["id"], "default")  # the server's `all`

    assert await pushed(client, rt, push_service, h.owner, h.general, "in general") == ["/alice"]
    assert await pushed(client, rt, push_service, h.owner, h.general, f"<@{h.b.id}>") == ["/alice", "/bob"]
    assert await pushed(client, rt, push_service, h.owner, kitchen["id"], "in the kitchen") == ["/bob"]
    # `nothing` silences a mention.
    assert await pushed(client, rt, push_service, h.owner, kitchen["id"], f"<@{h.a.id}> hey") == ["/bob"]


async def test_nothing_silences_mentions_in_the_server_or_the_room(api, client, accounts, rt, push_service):
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    await set_guild(api, h.a, h.id, "nothing")
    await set_guild(api, h.b, h.id, "all")
    await set_channel(api, h.b, h.general, "nothing")

    assert await pushed(client, rt, push_service, h.owner, h.general, f"<@{h.a.id}> <@{h.b.id}> hey") == []
    assert await pushed(client, rt, push_service, h.owner, h.general, "@everyone look") == []


async def test_a_mute_counts_as_nothing_until_it_runs_out(api, client, accounts, rt, clock, push_service):
    clock.set(START)
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    hour = START + timedelta(hours=1)
    await set_guild(api, h.a, h.id, "all", muted_until=at(hour))
    await set_guild(api, h.b, h.id, "mentions", muted_until=at(hour))
    await set_channel(api, h.b, h.general, "all")  # the server's mute silences its rooms too
    await set_channel(api, h.owner, h.general, "all", muted_until=at(hour))

    mention_all = f"<@{h.a.id}> <@{h.b.id}> <@{h.owner.id}> hey"
    await add_member(rt, h.id, h.outsider)  # a fourth member writes: everyone else is muted
    assert await pushed(client, rt, push_service, h.outsider, h.general, mention_all) == []

    clock.set(hour)
    assert await pushed(client, rt, push_service, h.outsider, h.general, "an hour later") == [
        "/alice", "/bob", "/owner"]


async def test_suppressed_everyone_is_no_mention_but_a_direct_one_still_is(api, client, accounts, rt,
                                                                          push_service):
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    carol = await accounts.register("carol")
    await add_member(rt, h.id, carol)
    await subscribe(api, carol, push_service, "/carol")
    await set_guild(api, h.a, h.id, "mentions", suppress_everyone=True)
    await set_guild(api, carol, h.id, "all", suppress_everyone=True)  # `all`: every message anyway

    assert await pushed(client, rt, push_service, h.owner, h.general, "@everyone meeting") == ["/bob", "/carol"]
    assert await pushed(client, rt, push_service, h.owner, h.general, f"@everyone <@{h.a.id}> you too") == [
        "/alice", "/bob", "/carol"]


async def test_a_conversation_notifies_by_default_and_follows_its_setting(api, client, accounts, rt, clock,
                                                                         push_service):
    clock.set(START)
    alice, bob, carol, dave = [await accounts.register(n) for n in ("alice", "bob", "carol", "dave")]
    conv = await group(api, alice, bob, carol, dave, name="Mead club")
    for who in (bob, carol, dave):
        await subscribe(api, who, push_service, f"/{who['user']['username']}")
    await set_channel(api, bob, conv["id"], "nothing")
    await set_channel(api, carol, conv["id"], "mentions")  # a conversation's messages are sent at `mentions`
    await set_channel(api, dave, conv["id"], "all", muted_until=at(START + timedelta(minutes=15)))

    assert await pushed(client, rt, push_service, alice, conv["id"], "who brings the honey?") == ["/carol"]
    clock.advance(minutes=15)
    assert await pushed(client, rt, push_service, alice, conv["id"], "anyone?") == ["/carol", "/dave"]

    dm = await open_dm(api, alice, bob)  # another conversation: its own default
    assert await pushed(client, rt, push_service, alice, dm["id"], "psst") == ["/bob"]


async def test_all_sends_nothing_from_a_room_the_user_may_not_view(api, client, accounts, rt, push_service):
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    council = await room(client, h.owner, h.id, name="council")
    await override(client, h.owner, council["id"], h.id, "role", deny="VIEW_CHANNEL")
    await override(client, h.owner, council["id"], h.b.id, "member", allow="VIEW_CHANNEL")
    await set_guild(api, h.a, h.id, "all")
    await set_guild(api, h.b, h.id, "all")
    await set_channel(api, h.a, h.general, "all")

    assert await pushed(client, rt, push_service, h.owner, council["id"], "secret plans") == ["/bob"]
    # A room-level `all` set while the room was visible sends nothing once it is not.
    await override(client, h.owner, h.general, h.a.id, "member", deny="VIEW_CHANNEL")
    assert await pushed(client, rt, push_service, h.owner, h.general, "still here?") == ["/bob"]


async def test_all_never_sends_another_partys_private_message(api, client, accounts, rt, push_service):
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    await set_guild(api, h.a, h.id, "all")
    await set_guild(api, h.b, h.id, "nothing")

    assert await pushed(client, rt, push_service, h.owner, h.general, f"/ls <@{h.b.id}> just for you") == []
    await set_guild(api, h.b, h.id, "mentions")
    assert await pushed(client, rt, push_service, h.owner, h.general, f"/ls <@{h.b.id}> again") == ["/bob"]


async def test_all_stays_within_twenty_notifications_a_minute(api, client, accounts, rt, clock, push_service):
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    carol = await accounts.register("carol")
    await add_member(rt, h.id, carol)
    await set_guild(api, h.a, h.id, "all")

    push_service.requests.clear()
    for i in range(24):  # three senders, each within their burst of 10 messages
        await post(client, (h.owner, h.b, carol)[i % 3], h.general, f"message {i}")
    await deliveries_of(rt).idle()
    assert [r["path"] for r in push_service.received()] == ["/alice"] * 20

    clock.advance(seconds=60)
    assert await pushed(client, rt, push_service, h.owner, h.general, "later") == ["/alice"]


async def test_nobody_choosing_all_costs_one_statement_per_message(api, client, accounts, rt, push_service,
                                                                  assert_query_count):
    h = await subscribed_hall(api, client, accounts, rt, push_service)
    members = [await accounts.register(f"member{i}") for i in range(8)]
    for who in members:
        await add_member(rt, h.id, who)
        await set_guild(api, who, h.id, "nothing")  # settings that are not `all` are not read for a message
    message = await post(client, h.owner, h.general, f"<@{h.a.id}> hi")
    sent = SentMessage(message, int(h.general), int(h.id), "general", int(h.owner.id), [int(h.a.id)], [])
    await deliveries_of(rt).idle()  # the message's own delivery runs no statement inside the count

    async with rt.read() as uow:
        with assert_query_count(1):
            assert await push_recipients(uow.conn, sent, [int(h.a.id)], uow.now) == [int(h.a.id)]
        plain = SentMessage({**message, "mentions": []}, int(h.general), int(h.id), "general", int(h.owner.id), [], [])
        with assert_query_count(1):
            assert await push_recipients(uow.conn, plain, [], uow.now) == []
