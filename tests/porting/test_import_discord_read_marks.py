"""Read marks after `meadhall import-discord --into` (docs/migrating.md): the owner and mapped accounts see what
the run imported as read, only in the rooms it wrote to and up to what it wrote; a read mark further on and the
mentions of messages sent here are left as they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.discord_export import Channel, guild, user
from tests.support.http import Api


def answer(ran: tuple[int, str, str]) -> dict[str, Any]:
    code, stdout, stderr = ran
    assert code == 0, (stdout, stderr)
    return json.loads(stdout.strip().splitlines()[-1])


async def test_into_marks_read_only_what_it_imported(client: Any, accounts: Any, meadhall: Any,
                                                    tmp_path: Path) -> None:
    api = Api(client)
    owner = await accounts.register("boss")
    ann_here = await accounts.register("annhere")
    ann, eve = user("201", "ann"), user("203", "eve")
    general, news = Channel("301", "general"), Channel("302", "news")
    general.say(eve, "hello")
    general.say(ann, "hi eve")
    news.say(eve, "the hall opens")
    first = tmp_path / "first"
    first.mkdir()
    general.write(first / "general.json", guild())
    news.write(first / "news.json", guild())
    mapping = tmp_path / "map.csv"
    mapping.write_text("201,annhere\n")
    guild_id = answer(await meadhall("import-discord", str(first), "--owner-email", "boss@example.com",
                                     "--map-users", str(mapping)))["guild_id"]
    rooms = {c["name"]: c["id"] for c in (await api.get(f"/guilds/{guild_id}/channels", owner))["channels"]}
    native = (await api.post(f"/guilds/{guild_id}/channels", owner, json={"type": "text", "name": "native"},
                             expect=201))["channel"]["id"]
    for room in (native, rooms["general"]):
        await api.post(f"/channels/{room}/messages", owner, json={"content": f"look <@{ann_here.id}>"}, expect=201)

    async def states() -> dict[str, tuple[Any, int]]:
        found = (await api.get("/users/@me/read-states", ann_here))["read_states"]
        return {s["channel_id"]: (s["last_read_message_id"], s["mention_count"]) for s in found}

    before = await states()
    assert before[native][1] == 1 and before[rooms["general"]][1] == 1

    news.say(ann, "winter is near")
    later = tmp_path / "later"
    later.mkdir()
    general.write(later / "general.json", guild())
    news.write(later / "news.json", guild())
    second = answer(await meadhall("import-discord", str(later), "--owner-email", "boss@example.com",
                                   "--map-users", str(mapping), "--into", guild_id))
    assert second["messages"] == 1
    after = await states()
    assert after[native] == before[native]  # no message imported there
    assert after[rooms["general"]] == before[rooms["general"]]  # nothing new imported: its mention stays unread
    page = await api.get(f"/channels/{rooms['news']}/messages", ann_here, params={"limit": 10})
    assert after[rooms["news"]] == (page["messages"][0]["id"], 0)
