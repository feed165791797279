"""`meadhall claim-imported --user ID --email E` (docs/imported-authors.md): an imported author's messages,
mentions, reactions, pins, memberships with their roles and bans become the local account's, the imported
author is gone, `instance.user_claim` is audited, open clients hear of the memberships; and the refusals."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from meadhall.db.schema import audit_log, guilds
from meadhall.messages.system import post_system_message
from tests.support.guilds import accept_invite, make_guild, make_invite, make_role, override
from tests.support.imported import authored_message, history_rows, imported_author, make_imported, meadhall
from tests.support.messages import post


def answer(r: Any) -> dict[str, Any]:
    assert r.exit_code == 0, r.stderr
    return dict(json.loads(r.stdout))


def refusal(r: Any) -> str:
    assert r.exit_code == 1, r.stdout
    assert r.stdout == ""
    return str(json.loads(r.stderr.strip().splitlines()[-1])["error"]["code"])


async def member_count(rt: Any, guild_id: str) -> int:
    async with rt.engine.connect() as conn:
        return int((await conn.execute(select(guilds.c.member_count).where(guilds.c.id == int(guild_id)))).scalar_one())


async def test_a_claim_hands_over_messages_mentions_reactions_pins_and_membership(api, client, accounts, rt, settings):
    owner = await accounts.register("owner")
    alice = await accounts.register("alice")
    guild = await make_guild(client, owner)
    room = guild["system_channel_id"]
    veteran = await make_role(client, owner, guild["id"], "veteran")
    ghost = await imported_author(rt, "old_alice", guild["id"])
    first = await authored_message(rt, room, ghost.id, "from the old place")
    second = await authored_message(rt, room, ghost.id, "and once more")
    naming = await post(client, owner, room, f"welcome back <@{ghost.id}>")
    await api.put(f"/channels/{room}/pins/{first}", owner, expect=204)
    # A reaction both made (alice reacted 👍 as the old author did) must not fail the claim.
    await history_rows(rt, guild_id=guild["id"], user_id=alice.id, reacted=((second, "👍"),))
    await history_rows(rt, guild_id=guild["id"], user_id=ghost.id, role_ids=(veteran["id"],),
                        reacted=((second, "👍"), (int(naming["id"]), "🎉")))
    before = await member_count(rt, guild["id"])

    out = answer(await meadhall(settings, "claim-imported", "--user", ghost.id, "--email", "alice@example.com"))
    assert out == {"user_id": alice.id, "moved": {"messages": 2, "reactions": 2, "memberships": 1}}

    await api.get(f"/users/{ghost.id}", owner, expect=404)
    history = {m["id"]: m for m in (await api.get(f"/channels/{room}/messages", owner))["messages"]}
    assert history[str(first)]["author"]["id"] == alice.id and history[str(second)]["author"]["id"] == alice.id
    assert history[str(first)]["author"]["badges"] == []
    assert history[naming["id"]]["content"] == f"welcome back <@{alice.id}>"
    assert history[naming["id"]]["mentions"] == [alice.id]
    assert [p["id"] for p in (await api.get(f"/channels/{room}/pins", owner))["messages"]] == [str(first)]
    thumbs = await api.get(f"/channels/{room}/messages/{second}/reactions/👍", owner)
    assert [u["id"] for u in thumbs["users"]] == [alice.id]
    party = await api.get(f"/channels/{room}/messages/{naming['id']}/reactions/🎉", owner)
    assert [u["id"] for u in party["users"]] == [alice.id]
    member = (await api.get(f"/guilds/{guild['id']}/members/{alice.id}", owner))["member"]
    assert member["roles"] == [veteran["id"]]
    listed = [m["user"]["id"] for m in (await api.get(f"/guilds/{guild['id']}/members", owner))["members"]]
    assert ghost.id not in listed and alice.id in listed
    assert await member_count(rt, guild["id"]) == before
    # The claimed history is hers to use: she sees the room and can write in it.
    await post(client, alice, room, "it was me all along")


async def test_a_member_already_keeps_her_membership_and_gains_the_roles(api, client, accounts, rt, settings):
    owner = await accounts.register("owner")
    alice = await accounts.register("alice")
    guild = await make_guild(client, owner)
    helper = await make_role(client, owner, guild["id"], "helper")
    veteran = await make_role(client, owner, guild["id"], "veteran")
    invite = await make_invite(client, owner, guild["system_channel_id"])
    assert (await accept_invite(client, alice, invite["code"])).status_code == 200
    await api.put(f"/guilds/{guild['id']}/members/{alice.id}/roles/{helper['id']}", owner, expect=204)
    await api.patch(f"/guilds/{guild['id']}/members/@me", alice, json={"nick": "Al"})
    ghost = await imported_author(rt, "old_alice", guild["id"])
    await history_rows(rt, guild_id=guild["id"], user_id=ghost.id, role_ids=(veteran["id"], helper["id"]))
    before = await member_count(rt, guild["id"])

    out = answer(await meadhall(settings, "claim-imported", "--user", ghost.id, "--email", "alice@example.com"))
    assert out["moved"] == {"messages": 0, "reactions": 0, "memberships": 1}
    member = (await api.get(f"/guilds/{guild['id']}/members/{alice.id}", owner))["member"]
    assert sorted(member["roles"]) == sorted([helper["id"], veteran["id"]]) and member["nick"] == "Al"
    assert await member_count(rt, guild["id"]) == before - 1
    listed = [m["user"]["id"] for m in (await api.get(f"/guilds/{guild['id']}/members", owner))["members"]]
    assert sorted(listed) == sorted([owner.id, alice.id])


async def test_a_ban_of_the_author_becomes_the_accounts(api, client, accounts, rt, settings):
    owner = await accounts.register("owner")
    await accounts.register("alice")
    home = await make_guild(client, owner, "Home")
    strict = await make_guild(client, owner, "Strict")
    ghost = await imported_author(rt, "old_alice", home["id"])
    await history_rows(rt, guild_id=home["id"], user_id=ghost.id, banned_from=strict["id"])
    out = answer(await meadhall(settings, "claim-imported", "--user", ghost.id, "--email", "alice@example.com"))
    ban = (await api.get(f"/guilds/{strict['id']}/bans/{out['user_id']}", owner))["ban"]
    assert ban["reason"] == "imported ban"
    await api.get(f"/guilds/{strict['id']}/bans/{ghost.id}", owner, expect=404)


async def test_a_guild_that_banned_the_person_gets_the_history_but_not_the_member(api, client, accounts, rt,
                                                                                  settings):
    owner = await accounts.register("owner")
    alice = await accounts.register("alice")
    guild = await make_guild(client, owner)
    room = guild["system_channel_id"]
    await api.put(f"/guilds/{guild['id']}/bans/{alice.id}", owner, json={"reason": "spam"}, expect=204)
    ghost = await imported_author(rt, "old_alice", guild["id"])
    said = await authored_message(rt, room, ghost.id, "from the old place")
    before = await member_count(rt, guild["id"])

    out = answer(await meadhall(settings, "claim-imported", "--user", ghost.id, "--email", "alice@example.com"))
    assert out["moved"] == {"messages": 1, "reactions": 0, "memberships": 0}
    listed = [m["user"]["id"] for m in (await api.get(f"/guilds/{guild['id']}/members", owner))["members"]]
    assert alice.id not in listed and ghost.id not in listed
    assert await member_count(rt, guild["id"]) == before - 1
    assert (await api.get(f"/guilds/{guild['id']}/bans/{alice.id}", owner))["ban"]["reason"] == "spam"
    history = {m["id"]: m for m in (await api.get(f"/channels/{room}/messages", owner))["messages"]}
    assert history[str(said)]["author"]["id"] == alice.id
    await api.get(f"/channels/{room}/messages", alice, expect=404)  # still out


async def test_every_trace_of_the_author_names_the_person(api, client, accounts, rt, settings):
    """Its own messages naming itself, the system messages about it, its per-member overrides."""
    owner = await accounts.register("owner")
    alice = await accounts.register("alice")
    guild = await make_guild(client, owner)
    room = guild["system_channel_id"]
    ghost = await imported_author(rt, "old_alice", guild["id"])
    own = await authored_message(rt, room, ghost.id, f"I am <@{ghost.id}>")
    async with rt.uow() as uow:
        await post_system_message(uow, guild_id=int(guild["id"]), channel_id=int(room), type_="member_join",
                                  user_id=int(ghost.id), display_name="old_alice", via="invite")
    await override(client, owner, room, ghost.id, "member", deny="SEND_MESSAGES")
    answer(await meadhall(settings, "claim-imported", "--user", ghost.id, "--email", "alice@example.com"))

    history = (await api.get(f"/channels/{room}/messages", owner))["messages"]
    mine = next(m for m in history if m["id"] == str(own))
    assert mine["content"] == f"I am <@{alice.id}>"
    joins = [m for m in history if m["kind"] == "system" and m["system_event"]["type"] == "member_join"]
    assert str(ghost.id) not in {j["system_event"]["user_id"] for j in joins}
    assert alice.id in {j["system_event"]["user_id"] for j in joins}
    channel = await api.get(f"/channels/{room}", owner)
    overrides = channel.get("channel", channel)["permission_overrides"]
    assert [o["id"] for o in overrides if o["type"] == "member"] == [alice.id]


async def test_the_claim_is_audited_without_an_actor(accounts, rt, settings):
    alice = await accounts.register("alice")
    ghost = await imported_author(rt, "old_alice")
    answer(await meadhall(settings, "claim-imported", "--user", ghost.id, "--email", "ALICE@example.com"))
    async with rt.engine.connect() as conn:
        rows = (await conn.execute(select(audit_log).where(audit_log.c.action == "instance.user_claim"))).mappings().all()
    [entry] = rows
    assert entry["actor_id"] is None and entry["guild_id"] is None
    assert entry["target_type"] == "user" and entry["target_id"] == int(alice.id)
    assert entry["data"]["imported_user_id"] == ghost.id


async def test_refusals_change_nothing(api, client, accounts, rt, settings):
    owner = await accounts.register("owner")
    alice = await accounts.register("alice")
    guild = await make_guild(client, owner)
    ghost = await imported_author(rt, "old_alice", guild["id"])
    await authored_message(rt, guild["system_channel_id"], ghost.id, "still mine")
    claim = ("claim-imported", "--user")
    # Not an imported author: a local account, an unknown id, something that is no id.
    assert refusal(await meadhall(settings, *claim, alice.id, "--email", "owner@example.com")) == "user.not_found"
    assert refusal(await meadhall(settings, *claim, "123456789", "--email", "alice@example.com")) == "user.not_found"
    assert refusal(await meadhall(settings, *claim, "old_alice", "--email", "alice@example.com")) == "user.not_found"
    # No account with that email.
    assert refusal(await meadhall(settings, *claim, ghost.id, "--email", "nobody@example.com")) == "user.not_found"
    # The account of that email is an imported author itself.
    other = await accounts.register("other")
    await make_imported(rt, other.id)
    assert refusal(await meadhall(settings, *claim, ghost.id, "--email", "other@example.com")) == "user.imported"
    # Usage: both flags are required.
    assert (await meadhall(settings, *claim, ghost.id)).exit_code == 2
    shown = (await api.get(f"/users/{ghost.id}", owner))["user"]
    assert shown["badges"] == ["imported"]
    history = (await api.get(f"/channels/{guild['system_channel_id']}/messages", owner))["messages"]
    assert [m["author"]["id"] for m in history if m["content"] == "still mine"] == [ghost.id]
    # And the same command for the right pair succeeds.
    answer(await meadhall(settings, *claim, ghost.id, "--email", "alice@example.com"))


async def test_open_clients_hear_of_the_new_member(client, accounts, rt, settings, gateway):
    owner = await accounts.register("owner")
    alice = await accounts.register("alice")
    guild = await make_guild(client, owner)
    ghost = await imported_author(rt, "old_alice", guild["id"])
    watching = await gateway.identified(owner["token"])
    claiming = await gateway.identified(alice["token"])
    answer(await meadhall(settings, "claim-imported", "--user", ghost.id, "--email", "alice@example.com"))
    created = await claiming.dispatch("GUILD_CREATE")
    assert created["id"] == guild["id"]
    removed = await watching.dispatch("MEMBER_REMOVE")
    assert removed == {"guild_id": guild["id"], "user": removed["user"]} and removed["user"]["id"] == ghost.id
    added = await watching.dispatch("MEMBER_ADD")
    assert added["user"]["id"] == alice.id and added["guild_id"] == guild["id"]
