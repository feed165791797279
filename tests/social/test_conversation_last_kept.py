"""Last messages of conversation lists kept between requests (social/conversations/last_messages.py): every
change to a conversation's messages, made through the service or on another node, shows in the next list
and READY; what changes without touching messages (reactions' `me`, authors) is read for every request."""

from __future__ import annotations

from meadhall.gateway.auth import GatewayIdentity
from meadhall.gateway.ready import ready_payload
from meadhall.social.conversations import last_messages
from tests.support.conversations import conversations_of, open_dm
from tests.support.messages import post, react, url
from tests.support.nodes import second_node

API = "/api/v1"


async def last_of(api, who):
    [conv] = await conversations_of(api, who)
    return conv["last_message"]


async def test_changes_to_a_kept_last_message_show_in_the_next_list_and_ready(api, accounts, rt):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    conv = await open_dm(api, alice, bob)
    first = await post(api.client, alice, conv["id"], "first")
    reply = await post(api.client, bob, conv["id"], "a reply", reply_to_id=first["id"])
    assert (await last_of(api, alice))["referenced_message"]["content"] == "first"  # now kept

    await api.patch(f"/channels/{conv['id']}/messages/{first['id']}", alice, json={"content": "first, edited"},
                    expect=200)
    assert (await last_of(api, alice))["referenced_message"]["content"] == "first, edited"
    await api.patch(f"/channels/{conv['id']}/messages/{reply['id']}", bob, json={"content": "a reply, edited"},
                    expect=200)
    assert (await last_of(api, alice))["content"] == "a reply, edited"
    await react(api.client, alice, conv["id"], reply["id"])
    [mine] = (await last_of(api, alice))["reactions"]
    [theirs] = (await last_of(api, bob))["reactions"]
    assert (mine["count"], mine["me"], theirs["count"], theirs["me"]) == (1, True, 1, False)
    await api.put(f"/channels/{conv['id']}/pins/{reply['id']}", alice, expect=204)
    assert (await last_of(api, alice))["pinned"] is True
    ready = await ready_payload(rt, GatewayIdentity(int(alice.id), 0, False), "gs")
    assert ready is not None and ready["dm_channels"][0]["last_message"] == await last_of(api, alice)

    await api.delete(f"/channels/{conv['id']}/messages/{reply['id']}", bob, expect=204)
    shown = await last_of(api, alice)
    assert (shown["id"], shown["content"]) == (first["id"], "first, edited")


async def test_a_node_sees_changes_made_on_another(api, accounts, rt, settings, clock):
    alice, bob = await accounts.register("alice"), await accounts.register("bob")
    conv = await open_dm(api, alice, bob)
    sent = await post(api.client, bob, conv["id"], "one")
    assert (await last_of(api, alice))["content"] == "one"
    async with second_node(settings, rt, clock) as node_b:
        r = await node_b.patch(url(conv["id"], f"/{sent['id']}"), json={"content": "one, edited on B"},
                               headers=bob.headers)
        assert r.status_code == 200, r.text
        assert (await last_of(api, alice))["content"] == "one, edited on B"
        await post(node_b, bob, conv["id"], "two, sent on B")
        assert (await last_of(api, alice))["content"] == "two, sent on B"


async def test_the_kept_messages_stay_within_their_bound(api, accounts, monkeypatch):
    monkeypatch.setattr(last_messages.KEPT, "max_size", 2)
    last_messages.KEPT.clear()
    me = await accounts.register("me")
    for i in range(3):
        other = await accounts.register(f"other{i}")
        conv = await open_dm(api, me, other)
        await post(api.client, other, conv["id"], f"hello {i}")
    for _ in range(2):
        shown = {c["last_message"]["content"] for c in await conversations_of(api, me)}
        assert shown == {"hello 0", "hello 1", "hello 2"}
        assert len(last_messages.KEPT) <= 2
