"""`meadhall import-discord` (3.21; docs/migrating.md): a realistic DiscordChatExporter export imported through
the CLI, then read back through the HTTP API as the owner sees it: rooms, categories and threads; roles;
imported authors; every message in source order with its times, edits, pins, replies, mentions, reactions and
attachments; the search index; read marks; what was left out and why; and no URL ever fetched."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from meadhall.admin.stats.queries import select_user_counts
from meadhall.db.schema import event_outbox
from tests.support.discord_export import EMOJI_PNG, LONG_TEXT, Hall, hall_export
from tests.support.files import fetch
from tests.support.http import Api
from tests.support.outbound import Canary


@dataclass
class Imported:
    hall: Hall
    result: dict[str, Any]
    owner: Any
    guild_id: str
    rooms: dict[str, dict[str, Any]]


async def imported_hall(tmp_path: Path, accounts: Any, meadhall: Any, canary: Canary) -> Imported:
    hall = hall_export(tmp_path / "export", f"http://127.0.0.1:{canary.port}")
    owner = await accounts.register("boss")
    ran = await meadhall("import-discord", str(hall.folder), "--owner-email", "boss@example.com")
    result = ran.json
    return Imported(hall, result, owner, result["guild_id"], {})


def stamp(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


async def all_messages(api: Api, who: Any, channel_id: str) -> list[dict[str, Any]]:
    """The room's whole history, oldest first, paged backwards as a client does."""
    found: list[dict[str, Any]] = []
    before = None
    while True:
        params = {"limit": 100, **({"before": before} if before else {})}
        page = await api.get(f"/channels/{channel_id}/messages", who, params=params)
        found.extend(page["messages"])
        if not page["has_more"]:
            return list(reversed(found))
        before = page["messages"][-1]["id"]


async def test_the_guild_has_the_exports_rooms_categories_threads_roles_and_authors(
        client: Any, accounts: Any, meadhall: Any, canary: Canary, tmp_path: Path, rt: Any) -> None:
    done = await imported_hall(tmp_path, accounts, meadhall, canary)
    api = Api(client)
    # Nothing of the import is sent to clients: the CLI's events would wait in the outbox; there are none.
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(event_outbox))).scalar_one() == 0
        # Imported authors are accounts, never online nor active in the instance's statistics: only the owner is.
        now = rt.clock.now()
        counts = await select_user_counts(conn, now, now - timedelta(minutes=2))
        assert (counts.online_now, counts.active_1d, counts.active_30d) == (1, 1, 1), counts
    assert done.result["rooms"] == 4
    assert done.result["authors"] == {"mapped": 0, "imported": 5}
    guilds = await api.get("/users/@me/guilds", done.owner)
    mine = next(g for g in guilds["guilds"] if g["id"] == done.guild_id)
    assert mine["name"] == "Old Hall"
    channels = (await api.get(f"/guilds/{done.guild_id}/channels", done.owner))["channels"]
    by_name = {c["name"]: c for c in channels}
    assert by_name["Text Channels"]["type"] == "category"
    assert by_name["Announcements"]["type"] == "category"
    assert by_name["general"]["parent_id"] == by_name["Text Channels"]["id"]
    assert by_name["general"]["topic"] == "Talk of the hall"
    assert by_name["news"]["parent_id"] == by_name["Announcements"]["id"]
    # A thread: `<parent>-<thread>` in its parent's category; a thread whose parent is not exported: top level.
    assert by_name["general-raid-plans"]["parent_id"] == by_name["Text Channels"]["id"]
    assert by_name["lost-channel-old-thread"]["parent_id"] is None
    assert {c["type"] for c in channels if c["name"] not in ("Text Channels", "Announcements")} == {"text"}
    assert len([c for c in channels if c["type"] == "text"]) == 4

    roles = {r["name"]: r for r in (await api.get(f"/guilds/{done.guild_id}/roles", done.owner))["roles"]}
    assert roles["Elder"]["color"] == 0xE74C3C and roles["Skald"]["color"] == 0x3498DB
    assert roles["Elder"]["position"] > roles["Skald"]["position"]
    assert roles["Administrator"]["position"] > roles["Elder"]["position"]

    members = (await api.get(f"/guilds/{done.guild_id}/members", done.owner, params={"limit": 100}))["members"]
    by_user = {m["user"]["username"]: m for m in members}
    # Names in the username rule (`bjørn` -> `bjrn`), mention-only and reaction-only users included.
    assert set(by_user) == {"boss", "ann", "bjrn", "cara", "dave", "eve"}
    assert by_user["ann"]["user"]["display_name"] == "Ann the Bold"
    assert "imported" in by_user["ann"]["user"]["badges"]
    assert "imported" not in by_user["boss"]["user"]["badges"]
    assert by_user["ann"]["roles"] == [roles["Elder"]["id"]]
    assert by_user["bjrn"]["roles"] == [roles["Skald"]["id"]]
    assert by_user["boss"]["roles"] == [roles["Administrator"]["id"]]

    audit = await api.get(f"/guilds/{done.guild_id}/audit-logs", done.owner)
    [entry] = [e for e in audit["audit_entries"] if e["action"] == "guild.import"]
    assert entry["actor_id"] is None and entry["target_id"] == done.guild_id
    assert entry["data"]["source"] == "discord" and entry["data"]["messages"] == done.result["messages"]
    assert entry["data"]["skipped"] == done.result["skipped"]
    assert canary.connections == 0


async def test_history_keeps_order_times_edits_pins_replies_mentions_and_joins(
        client: Any, accounts: Any, meadhall: Any, canary: Canary, tmp_path: Path) -> None:
    done = await imported_hall(tmp_path, accounts, meadhall, canary)
    api = Api(client)
    channels = (await api.get(f"/guilds/{done.guild_id}/channels", done.owner))["channels"]
    general = next(c for c in channels if c["name"] == "general")
    said = done.hall.said
    got = await all_messages(api, done.owner, general["id"])
    # Written newest first in two parts, read back oldest first: one room, source order, source times.
    starts = ["Welcome to", "Thanks <@", "ping <@", "cara joined", "word word", "word word", "Vote here", "Files for",
              "an answer"]
    assert len(got) == len(starts)
    assert all(m["content"].startswith(start) for m, start in zip(got, starts, strict=True)), got
    welcome, thanks, raw, join, long1, long2, vote, files, orphan = got
    assert stamp(welcome["created_at"]) == stamp(said["welcome"]["timestamp"])
    assert stamp(welcome["edited_at"]) == stamp(said["welcome"]["timestampEdited"])
    assert welcome["pinned"] is True and welcome["author"]["username"] == "ann"
    assert {m["kind"] for m in got if m is not join} == {"normal"}  # the kinds of 2.x, as a send writes them
    ann_id = welcome["author"]["id"]
    assert thanks["content"] == f"Thanks <@{ann_id}>!" and thanks["mentions"] == [ann_id]
    assert thanks["reply_to_id"] == welcome["id"]
    dave = next(m for m in (await api.get(f"/guilds/{done.guild_id}/members", done.owner,
                                          params={"limit": 100}))["members"] if m["user"]["username"] == "dave")
    assert raw["content"] == f"ping <@{dave['user']['id']}> about the mead"
    assert raw["pinned"] is True  # by the ChannelPinnedMessage notice, which is not a message here
    assert join["kind"] == "system" and join["content"] == "cara joined the server."
    assert join["system_event"]["type"] == "member_join" and join["system_event"]["via"] == "invite"
    assert join["system_event"]["user_id"] == raw["author"]["id"]
    assert long1["content"] + " " + long2["content"] == LONG_TEXT
    assert len(long1["content"]) <= 4000 and long1["author"]["id"] == long2["author"]["id"]
    assert orphan["reply_to_id"] is None
    assert [int(m["id"]) for m in got] == sorted(int(m["id"]) for m in got)
    pins = await api.get(f"/channels/{general['id']}/pins", done.owner)
    assert {m["id"] for m in pins["messages"]} == {welcome["id"], raw["id"]}
    skipped = done.result["skipped"]
    assert skipped["unsupported_type"] == 1  # ThreadCreated
    assert skipped["reply_target_missing"] == 1
    assert skipped["embeds"] == 1 and skipped["stickers"] == 1
    # 9 in general (the long one is two), one each in news, the thread and the lost thread.
    assert done.result["messages"] == 12

    found = await api.get(f"/channels/{general['id']}/messages/search", done.owner, params={"q": "raid"})
    assert [m["id"] for m in found["messages"]] == [files["id"]]
    everywhere = await api.get(f"/guilds/{done.guild_id}/messages/search", done.owner, params={"q": "gate"})
    assert [m["content"] for m in everywhere["messages"]] == ["Plan: meet at the gate"]

    # Imported history is not news to the owner: every room read up to its newest message.
    states = {s["channel_id"]: s for s in (await api.get("/users/@me/read-states", done.owner))["read_states"]}
    assert states[general["id"]]["last_read_message_id"] == orphan["id"]
    assert states[general["id"]]["mention_count"] == 0
    assert stamp(vote["created_at"]) == stamp(said["reacted"]["timestamp"])
    assert canary.connections == 0


async def test_reactions_emojis_and_attachments_only_from_the_export(
        client: Any, accounts: Any, meadhall: Any, canary: Canary, tmp_path: Path) -> None:
    done = await imported_hall(tmp_path, accounts, meadhall, canary)
    api = Api(client)
    channels = (await api.get(f"/guilds/{done.guild_id}/channels", done.owner))["channels"]
    general = next(c for c in channels if c["name"] == "general")
    got = {m["content"][:9]: m for m in await all_messages(api, done.owner, general["id"])}
    emojis = (await api.get(f"/guilds/{done.guild_id}/emojis", done.owner))["emojis"]
    assert [e["name"] for e in emojis] == ["hallmark"]  # `gone` had no local image: dropped
    hallmark = f"<:hallmark:{emojis[0]['id']}>"
    vote = got["Vote here"]
    assert {(r["emoji"], r["count"]) for r in vote["reactions"]} == {("👍", 2), (hallmark, 1)}
    thumbs = await api.get(f"/channels/{general['id']}/messages/{vote['id']}/reactions/👍", done.owner)
    assert sorted(u["username"] for u in thumbs["users"]) == ["bjrn", "eve"]
    assert done.result["skipped"]["custom_emoji"] == 1
    assert done.result["skipped"]["reaction_custom_emoji"] == 1

    files = got["Files for"]
    assert [a["original_name"] for a in files["attachments"]] == ["notes.txt"]
    assert files["attachments"][0]["uploader_id"] == files["author"]["id"]
    content = await fetch(client, done.owner, files["attachments"][0]["id"])
    assert content.status_code == 200 and content.content == b"the raid is on thursday\n"
    image = await fetch(client, done.owner, emojis[0]["file_id"])
    assert image.status_code == 200 and image.content == EMOJI_PNG
    assert done.result["attachments"] == 1
    skipped = done.result["skipped"]
    assert skipped["attachment_outside_export"] == 2  # ../outside.txt and /etc/passwd
    assert skipped["attachment_remote_url"] == 1
    assert skipped["attachment_missing_file"] == 1
    assert canary.connections == 0
