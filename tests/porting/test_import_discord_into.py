"""`meadhall import-discord --into` and `--map-users` (3.21; docs/migrating.md): a later export of the same
channels adds only what is new, into the same rooms, with the same imported authors; mapped authors are the
local accounts, made members with their source roles, and see no imported history as unread."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.discord_export import guild, hall_export, user
from tests.support.http import Api
from tests.support.outbound import Canary


def answer(ran: tuple[int, str, str]) -> dict[str, Any]:
    code, stdout, stderr = ran
    assert code == 0, (stdout, stderr)
    return json.loads(stdout.strip().splitlines()[-1])


async def room_history(api: Api, who: Any, channel_id: str) -> list[dict[str, Any]]:
    page = await api.get(f"/channels/{channel_id}/messages", who, params={"limit": 100})
    assert not page["has_more"]
    return list(reversed(page["messages"]))


async def rooms_by_name(api: Api, who: Any, guild_id: str) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in (await api.get(f"/guilds/{guild_id}/channels", who))["channels"]}


async def members_by_name(api: Api, who: Any, guild_id: str) -> dict[str, dict[str, Any]]:
    found = await api.get(f"/guilds/{guild_id}/members", who, params={"limit": 100})
    return {m["user"]["username"]: m for m in found["members"]}


async def test_a_later_export_into_the_same_guild_adds_only_what_is_new(
        client: Any, accounts: Any, meadhall: Any, canary: Canary, tmp_path: Path) -> None:
    api = Api(client)
    owner = await accounts.register("boss")
    hall = hall_export(tmp_path / "first", f"http://127.0.0.1:{canary.port}")
    first = answer(await meadhall("import-discord", str(hall.folder), "--owner-email", "boss@example.com"))
    guild_id = first["guild_id"]
    rooms_before = await rooms_by_name(api, owner, guild_id)
    people_before = await members_by_name(api, owner, guild_id)
    general_before = await room_history(api, owner, rooms_before["general"]["id"])

    # The next month's export: everything again, and three new messages (one by someone new).
    general, news = hall.channels["general"], hall.channels["news"]
    general.say(hall.people["ann"], "A new month in the hall")
    general.say(user("206", "finn", "Finn"), "First time here", type_="Reply",
                reference={"messageId": hall.said["welcome"]["id"], "channelId": "301", "guildId": "111"})
    news.say(hall.people["ann"], "The hall closes for winter")
    later = tmp_path / "later"
    later.mkdir()
    general.write(later / "general.json", guild())
    news.write(later / "news.json", guild())
    second = answer(await meadhall("import-discord", str(later), "--owner-email", "boss@example.com",
                                   "--into", guild_id))
    assert second["guild_id"] == guild_id
    assert second["messages"] == 3
    assert second["skipped"]["already_imported"] == 9  # the 8 source messages of general written before, and news
    assert second["authors"] == {"mapped": 0, "imported": 6}

    rooms_after = await rooms_by_name(api, owner, guild_id)
    assert {n: (c["id"], c["parent_id"]) for n, c in rooms_after.items()} == \
        {n: (c["id"], c["parent_id"]) for n, c in rooms_before.items()}  # the same rooms, none added
    people_after = await members_by_name(api, owner, guild_id)
    assert {n: m["user"]["id"] for n, m in people_after.items() if n != "finn"} == \
        {n: m["user"]["id"] for n, m in people_before.items()}
    assert "imported" in people_after["finn"]["user"]["badges"]
    general_after = await room_history(api, owner, rooms_before["general"]["id"])
    assert general_after[:len(general_before)] == general_before
    new = general_after[len(general_before):]
    assert [m["content"] for m in new] == ["A new month in the hall", "First time here"]
    assert new[1]["reply_to_id"] == general_before[0]["id"]  # a reply into the earlier import
    news_after = await room_history(api, owner, rooms_before["news"]["id"])
    assert [m["content"] for m in news_after] == ["The hall opens at dusk", "The hall closes for winter"]

    again = answer(await meadhall("import-discord", str(later), "--owner-email", "boss@example.com",
                                  "--into", guild_id))
    assert again["messages"] == 0 and again["rooms"] == 2
    assert len(await room_history(api, owner, rooms_before["general"]["id"])) == len(general_after)
    assert canary.connections == 0


async def test_mapped_authors_are_the_local_accounts_with_their_source_roles(
        client: Any, accounts: Any, meadhall: Any, canary: Canary, tmp_path: Path) -> None:
    api = Api(client)
    owner = await accounts.register("boss")
    ann_here = await accounts.register("annhere")
    hall = hall_export(tmp_path / "export", f"http://127.0.0.1:{canary.port}")
    mapping = tmp_path / "map.csv"
    mapping.write_text("# source id, local username\n201,annhere\n\n")
    result = answer(await meadhall("import-discord", str(hall.folder), "--owner-email", "boss@example.com",
                                   "--map-users", str(mapping), "--name", "The Hall Reborn"))
    assert result["authors"] == {"mapped": 1, "imported": 4}
    guild_id = result["guild_id"]
    mine = await api.get("/users/@me/guilds", ann_here)
    assert [g["name"] for g in mine["guilds"] if g["id"] == guild_id] == ["The Hall Reborn"]
    owned = await api.get("/users/@me/guilds", owner)
    assert [g["owner_id"] for g in owned["guilds"] if g["id"] == guild_id] == [owner.id]
    people = await members_by_name(api, ann_here, guild_id)
    assert "ann" not in people  # no imported author for a mapped one
    roles = {r["name"]: r["id"] for r in (await api.get(f"/guilds/{guild_id}/roles", ann_here))["roles"]}
    assert people["annhere"]["roles"] == [roles["Elder"]]
    rooms = await rooms_by_name(api, ann_here, guild_id)
    general = await room_history(api, ann_here, rooms["general"]["id"])
    assert general[0]["author"]["id"] == ann_here.id and general[0]["content"] == "Welcome to the hall"
    assert general[1]["content"] == f"Thanks <@{ann_here.id}>!"
    # The mapped account was mentioned in imported history, yet nothing shows as unread or as a mention.
    states = {s["channel_id"]: s for s in (await api.get("/users/@me/read-states", ann_here))["read_states"]}
    assert states[rooms["general"]["id"]]["last_read_message_id"] == general[-1]["id"]
    assert states[rooms["general"]["id"]]["mention_count"] == 0
