"""Blocks in a 1:1 (docs/social.md "Blocks in a one-to-one conversation"): while either user of
a one-to-one conversation blocks the other, neither of them sends, edits their messages, sends typing,
starts or joins a call there (403 `relationship.blocked`), nobody turns it into a group, and the blocker
hears nothing of the refused attempts; history, reactions, pins and read marks keep working. A group of
three that shrinks to a blocked pair is held to the same rules."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.calls import VOICE, call_url, ongoing, start
from tests.support.conversations import add_recipient, group, leave, open_dm, participant_ids, soft_delete
from tests.support.delivery import online, refused
from tests.support.http import API, assert_error
from tests.support.messages import (
    THUMBS,
    ack,
    edit_message,
    events,
    history,
    message_of,
    pin,
    post,
    react,
    send,
    start_typing,
)
from tests.support.social import block, remove_relationship

BLOCKED = "relationship.blocked"
DIRECTIONS = ["first blocks second", "second blocks first"]


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return dict(VOICE)  # calls need a configured media server


async def blocked_pair(api: Any, client: Any, accounts: Any, direction: str) -> tuple[str, Any, Any, dict, dict]:
    """(conversation id, alice, bob, alice's message, bob's message): a 1:1 where each wrote before the block."""
    alice, bob = [await accounts.register(n) for n in ("alice", "bob")]
    dm = (await open_dm(api, alice, bob))["id"]
    mine, theirs = await post(client, alice, dm, "from alice"), await post(client, bob, dm, "from bob")
    await block(api, *((alice, bob) if direction == DIRECTIONS[0] else (bob, alice)))
    return dm, alice, bob, mine, theirs


async def typing(client: Any, account: Any, channel_id: str) -> Any:
    return await client.post(f"{API}/channels/{channel_id}/typing", headers=account.headers)


def edit(client: Any, account: Any, channel_id: str, message: dict, content: str) -> Any:
    return client.patch(f"{API}/channels/{channel_id}/messages/{message['id']}", json={"content": content},
                        headers=account.headers)


@pytest.mark.parametrize("direction", DIRECTIONS)
async def test_neither_edits_their_messages_while_a_block_stands(api, client, accounts, capture_events, direction):
    dm, alice, bob, mine, theirs = await blocked_pair(api, client, accounts, direction)
    await capture_events.reset()
    assert_error(await edit(client, alice, dm, mine, "changed"), 403, BLOCKED)
    assert_error(await edit(client, bob, dm, theirs, "changed"), 403, BLOCKED)
    assert await events(capture_events, "MESSAGE_UPDATE") == []
    assert (await message_of(client, bob, dm, mine["id"]))["content"] == "from alice"
    # The block gone, editing works again.
    await remove_relationship(api, *((alice, bob) if direction == DIRECTIONS[0] else (bob, alice)))
    assert (await edit_message(client, alice, dm, mine["id"], "changed"))["content"] == "changed"


@pytest.mark.parametrize("direction", DIRECTIONS)
async def test_neither_sends_typing_while_a_block_stands(api, client, accounts, capture_events, clock, direction):
    dm, alice, bob, _, _ = await blocked_pair(api, client, accounts, direction)
    await capture_events.reset()
    for who in (alice, bob):
        assert_error(await typing(client, who, dm), 403, BLOCKED)
    assert await events(capture_events, "TYPING_START") == []
    await remove_relationship(api, *((alice, bob) if direction == DIRECTIONS[0] else (bob, alice)))
    clock.advance(5)  # past the typing bucket (1 per 3 s) the refused attempt took
    await start_typing(client, alice, dm)
    [ev] = await events(capture_events, "TYPING_START")
    assert ev.users == (int(bob.id),)


async def test_the_blocker_hears_no_edit_or_typing_of_the_blocked_side(gateway, api, client, accounts):
    alice, bob = [await accounts.register(n) for n in ("alice", "bob")]
    dm = (await open_dm(api, alice, bob))["id"]
    theirs = await post(client, bob, dm, "from bob")
    await block(api, alice, bob)
    [conn] = await online(gateway, client, alice)
    assert_error(await edit(client, bob, dm, theirs, "sneaky"), 403, BLOCKED)
    assert_error(await typing(client, bob, dm), 403, BLOCKED)
    assert_error(await send(client, bob, dm, "hello?"), 403, BLOCKED)
    await refused(client, alice, conn, only=("MESSAGE_UPDATE", "TYPING_START", "MESSAGE_CREATE"))


@pytest.mark.parametrize("direction", DIRECTIONS)
async def test_nobody_turns_a_blocked_one_to_one_into_a_group(api, client, accounts, rt, capture_events,
                                                              direction):
    dm, alice, bob, _, _ = await blocked_pair(api, client, accounts, direction)
    carol = await accounts.register("carol")
    await capture_events.reset()
    for adder in (alice, bob):
        assert_error(await api.request("PUT", f"/channels/{dm}/recipients/{carol.id}", adder, expect=None),
                     403, BLOCKED)
    assert await participant_ids(rt, {"id": dm}) == {alice.id, bob.id}
    assert not (await api.get(f"/channels/{dm}", alice))["channel"]["is_group"]
    assert await events(capture_events, "DM_CHANNEL_CREATE") == []
    assert await events(capture_events, "DM_CHANNEL_UPDATE") == []
    # Carol was never let in: the conversation is not hers to see.
    await api.get(f"/channels/{dm}", carol, expect=404)
    # The block gone, the 1:1 becomes a group as usual.
    await remove_relationship(api, *((alice, bob) if direction == DIRECTIONS[0] else (bob, alice)))
    assert (await add_recipient(api, bob, {"id": dm}, carol))["is_group"]


@pytest.mark.parametrize("direction", DIRECTIONS)
async def test_neither_starts_a_call_while_a_block_stands(api, client, accounts, direction):
    dm, alice, bob, _, _ = await blocked_pair(api, client, accounts, direction)
    for who in (alice, bob):
        assert_error(await api.request("POST", call_url(dm), who, expect=None), 403, BLOCKED)
    await api.get(call_url(dm), alice, expect=404)  # no call was made


@pytest.mark.parametrize("direction", DIRECTIONS)
async def test_neither_joins_a_call_once_a_block_stands(api, client, accounts, direction):
    alice, bob = [await accounts.register(n) for n in ("alice", "bob")]
    dm = (await open_dm(api, alice, bob))["id"]
    await start(api, alice, dm)
    await block(api, *((alice, bob) if direction == DIRECTIONS[0] else (bob, alice)))
    assert_error(await api.request("POST", call_url(dm, "/join"), bob, expect=None), 403, BLOCKED)
    assert {p["user_id"]: p["state"] for p in (await ongoing(api, alice, dm))["participants"]}[bob.id] == "ringing"


@pytest.mark.parametrize("direction", DIRECTIONS)
async def test_history_reactions_pins_and_read_marks_keep_working(api, client, accounts, capture_events,
                                                                   direction):
    dm, alice, bob, mine, theirs = await blocked_pair(api, client, accounts, direction)
    for who in (alice, bob):
        page = await history(client, who, dm)
        assert [m["id"] for m in page["messages"]] == [theirs["id"], mine["id"]]
        assert (await message_of(client, who, dm, theirs["id"]))["content"] == "from bob"
    await react(client, alice, dm, theirs["id"])
    await react(client, bob, dm, mine["id"], THUMBS)
    assert (await message_of(client, bob, dm, theirs["id"]))["reactions"][0]["count"] == 1
    await pin(client, bob, dm, mine["id"])
    for who in (alice, bob):
        r = await ack(client, who, dm)
        assert r.status_code == 200, r.text
        assert r.json()["read_state"]["last_read_message_id"] == theirs["id"]


async def test_a_group_that_shrinks_to_a_blocked_pair_keeps_the_rules(api, client, accounts, clock):
    alice, bob, carol, dave = [await accounts.register(n) for n in ("alice", "bob", "carol", "dave")]
    conv = await group(api, carol, alice, bob)
    cid = conv["id"]
    await block(api, alice, bob)  # a block among the invited leaves the group as it is
    mine = await post(client, bob, cid, "in the group")
    await start_typing(client, bob, cid)
    await start(api, carol, cid)  # a call rings alice and bob
    await leave(api, carol, conv)  # three become two, with a block between them
    assert not (await api.get(f"/channels/{cid}", alice))["channel"]["is_group"]

    for who in (alice, bob):
        assert_error(await send(client, who, cid, "still there?"), 403, BLOCKED)
    assert_error(await edit(client, bob, cid, mine, "changed"), 403, BLOCKED)
    clock.advance(5)  # past the typing bucket of bob's typing in the group
    for who in (alice, bob):
        assert_error(await typing(client, who, cid), 403, BLOCKED)
        assert_error(await api.request("POST", call_url(cid), who, expect=None), 403, BLOCKED)
    for adder in (alice, bob):
        assert_error(await api.request("PUT", f"/channels/{cid}/recipients/{dave.id}", adder, expect=None),
                     403, BLOCKED)
    # Still readable, reactions and read marks work.
    for who in (alice, bob):
        assert [m["id"] for m in (await history(client, who, cid))["messages"]][0] == mine["id"]
        assert (await ack(client, who, cid)).status_code == 200
    await react(client, alice, cid, mine["id"])


async def test_a_call_ongoing_when_the_group_shrinks_cannot_be_joined(api, client, accounts):
    alice, bob, carol = [await accounts.register(n) for n in ("alice", "bob", "carol")]
    conv = await group(api, alice, bob, carol)
    await block(api, bob, alice)
    await start(api, alice, conv["id"])  # bob and carol ring
    await leave(api, carol, conv)  # carol's ringing ends; bob still rings in what is now a blocked 1:1
    assert {p["user_id"]: p["state"] for p in (await ongoing(api, alice, conv["id"]))["participants"]}[bob.id] \
        == "ringing"
    assert_error(await api.request("POST", call_url(conv["id"], "/join"), bob, expect=None), 403, BLOCKED)


async def test_edits_and_typing_follow_sending_where_the_other_account_was_deleted(api, client, accounts, rt):
    """The same check as sending: a 1:1 with a deleted account is kept to be read (docs/admin.md)."""
    alice, bob = [await accounts.register(n) for n in ("alice", "bob")]
    dm = (await open_dm(api, alice, bob))["id"]
    mine = await post(client, alice, dm, "before")
    await soft_delete(rt, bob)
    assert_error(await edit(client, alice, dm, mine, "after"), 403, "perm.denied")
    assert_error(await typing(client, alice, dm), 403, "perm.denied")
    assert [m["id"] for m in (await history(client, alice, dm))["messages"]] == [mine["id"]]
