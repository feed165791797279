"""`meadhall export-guild` and `meadhall import-guild` (3.21; docs/migrating.md, "Between Meadhall instances"):
a round trip keeps every message (content, times, kinds, system events, replies, webhook snapshots), reaction,
pin, override, role, emoji, sound, cosmetic, membership, nickname, ban and file byte for byte, compared through
the API of the new guild against the old one; the archive holds no secret and no direct conversation; mapped
users are the local accounts; an existing PATH is refused."""

from __future__ import annotations

import asyncio
import json
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from meadhall.db.schema import users
from tests.support.customisation import upload_cosmetic, upload_emoji, upload_sound, wav
from tests.support.factories import add_member, audit_rows
from tests.support.files import attached, fetch, gif, png, upload
from tests.support.guilds import give, make_guild, make_role, override, room
from tests.support.http import Api
from tests.support.messages import edit_message, history, pin, post, react

TOTP_EMAIL = "alice@example.com"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"RATE_LIMITS": {"messages.send": "10000/60", "reactions": "10000/60"}}


@dataclass
class Source:
    guild: dict[str, Any]
    owner: Any
    people: dict[str, Any]
    rooms: dict[str, str]
    secrets: list[str]
    hook_token: str


async def build_source(client: Any, accounts: Any, rt: Any, meadhall: Any) -> Source:
    """A guild using everything an archive carries, and the secrets of its people."""
    api = Api(client)
    alice = await accounts.register("alice", display_name="Alice of the Hall")
    bob = await accounts.register("bob")
    carol = await accounts.register("carol")
    eve = await accounts.register("eve")
    dave = await accounts.register("dave")
    guild = await make_guild(client, alice, "Mead Hall")
    gid, general = guild["id"], guild["system_channel_id"]
    for who in (bob, carol, eve):
        await add_member(rt, gid, who)
    lore = await room(client, alice, gid, name="Lore", type="category")
    sagas = await room(client, alice, gid, name="sagas", parent_id=lore["id"], topic="old tales",
                       slowmode_seconds=5)
    await room(client, alice, gid, name="Fireside", type="voice", parent_id=lore["id"], user_limit=7)
    frame = await upload_cosmetic(client, alice, gid, "gold frame")
    skalds = await make_role(client, alice, gid, "skalds", "SEND_MESSAGES|MANAGE_MESSAGES")
    await api.patch(f"/guilds/{gid}/roles/{skalds['id']}", alice, json={"color": 0x3498DB, "hoist": True,
                                                                         "frame_id": frame["id"]})
    await give(client, alice, gid, bob, skalds["id"])
    await override(client, alice, sagas["id"], skalds["id"], "role", allow="MANAGE_MESSAGES")
    await override(client, alice, sagas["id"], carol.id, "member", deny="ADD_REACTIONS")
    await api.patch(f"/guilds/{gid}/members/{carol.id}", alice, json={"nick": "Carol the Wise"})
    mead = await upload_emoji(client, alice, gid, "mead", data=gif(), content_type="image/gif", filename="mead.gif")
    await upload_sound(client, alice, gid, "horn", data=wav(0.5))
    r = await upload(client, alice, f"/guilds/{gid}/icon", png(32, 32, (10, 120, 40)), "icon.png")
    assert r.status_code == 200, r.text
    r = await upload(client, bob, "/users/@me/avatar", png(24, 24, (90, 20, 160)), "bob.png")
    assert r.status_code == 200, r.text
    await api.patch("/users/@me", bob, json={"bio": "Keeper of the horn"})

    first = await post(client, alice, general, f"Welcome <@{bob.id}>, see <#{sagas['id']}> <:mead:{mead['id']}>")
    await post(client, bob, general, "Thank you!", reply_to_id=first["id"])
    saga = await attached(client, carol, sagas["id"], bytes(range(256)) * 40, "saga.bin",
                          "application/octet-stream")
    told = await post(client, carol, sagas["id"], "The saga, in full", attachment_ids=[saga["id"]])
    await edit_message(client, carol, sagas["id"], told["id"], "The saga, in full (revised)")
    await post(client, alice, general, f"/ls <@{bob.id}> a word in private")
    await post(client, bob, general, "/me raises a horn")
    await post(client, eve, general, "I was here")
    await post(client, alice, general, "@everyone feast tonight")
    for who in (bob, carol):
        await react(client, who, general, first["id"], "👍")
    await react(client, alice, general, first["id"], f"<:mead:{mead['id']}>")
    await pin(client, alice, general, first["id"])
    hook = await api.post(f"/channels/{general}/webhooks", alice, json={"name": "Herald"}, expect=201)
    r = await client.post(f"/api/v1/webhooks/{hook['webhook']['id']}/{hook['webhook']['token']}",
                          json={"content": "The herald speaks", "username": "Town crier"})
    assert r.status_code == 201, r.text
    await api.put(f"/guilds/{gid}/bans/{eve.id}", alice, json={"reason": "mead thief"})
    await api.put(f"/guilds/{gid}/bans/{dave.id}", alice, json={"reason": "never welcome"})
    # A direct conversation between members: never part of a guild's archive.
    dm = await api.post("/users/@me/channels", alice, json={"recipient_id": bob.id}, expect=201)
    await post(client, alice, dm["channel"]["id"], "a direct secret: the cellar key is under the stone")

    totp = (await meadhall("totp-setup", "--email", TOTP_EMAIL)).json
    async with rt.engine.connect() as conn:
        hashes = [r[0] for r in await conn.execute(select(users.c.password_hash))]
    secrets = [a["token"] for a in (alice, bob, carol, eve, dave)] + [a["password"] for a in (alice,)]
    secrets += [f"{n}@example.com" for n in ("alice", "bob", "carol", "eve", "dave")]
    secrets += hashes + [totp["secret"], *totp["backup_codes"], hook["webhook"]["token"],
                         "the cellar key is under the stone", dm["channel"]["id"]]
    people = {"alice": alice, "bob": bob, "carol": carol, "eve": eve, "dave": dave}
    return Source(guild, alice, people, {"general": general, "sagas": sagas["id"]}, secrets, hook["webhook"]["token"])


def members_of(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]


async def all_messages(client: Any, who: Any, channel_id: str) -> list[dict[str, Any]]:
    """The room's history oldest first, every page."""
    out: list[dict[str, Any]] = []
    before = None
    while True:
        params = {"limit": 100, **({"before": before} if before else {})}
        page = await history(client, who, channel_id, **params)
        out += page["messages"]
        if not page["has_more"]:
            return list(reversed(out))
        before = page["messages"][-1]["id"]


class Ids:
    """Old id -> new id, learnt from corresponding objects and required to stay one-to-one."""

    def __init__(self) -> None:
        self.map: dict[str, str] = {}
        self.kept: set[str] = set()  # mapped accounts: the same id on both sides

    def same(self, old: str | None, new: str | None) -> None:
        if old is None or new is None:
            assert old is None and new is None, (old, new)
            return
        assert self.map.setdefault(old, new) == new, f"{old} maps to {self.map[old]} and {new}"
        assert old != new or old in self.kept, "an import makes new ids"

    def text(self, content: str) -> str:
        for old, new in self.map.items():
            content = content.replace(old, new)
        return content


async def assert_same_guild(client: Any, old_who: Any, new_who: Any, old_gid: str, new_gid: str, ids: Ids) -> None:
    api = Api(client)
    ids.same(old_gid, new_gid)
    old_roles = (await api.get(f"/guilds/{old_gid}/roles", old_who))["roles"]
    new_roles = (await api.get(f"/guilds/{new_gid}/roles", new_who))["roles"]
    assert [(r["name"], r["color"], r["position"], r["permissions"], r["hoist"]) for r in old_roles] == \
           [(r["name"], r["color"], r["position"], r["permissions"], r["hoist"]) for r in new_roles]
    for o, n in zip(old_roles, new_roles, strict=True):
        ids.same(o["id"], n["id"])
    for kind in ("cosmetics", "emojis", "sounds"):
        old_items = (await api.get(f"/guilds/{old_gid}/{kind}", old_who))[kind]
        new_items = (await api.get(f"/guilds/{new_gid}/{kind}", new_who))[kind]
        assert [i["name"] for i in old_items] == [i["name"] for i in new_items] and old_items, kind
        for o, n in zip(old_items, new_items, strict=True):
            ids.same(o["id"], n["id"])
            await assert_same_file(client, old_who, new_who, o["file_id"], n["file_id"], ids)
    for o, n in zip(old_roles, new_roles, strict=True):
        assert ids.map.get(o["frame_id"], o["frame_id"]) == n["frame_id"]
    old_rooms = (await api.get(f"/guilds/{old_gid}/channels", old_who))["channels"]
    new_rooms = (await api.get(f"/guilds/{new_gid}/channels", new_who))["channels"]
    keys = ("name", "type", "topic", "position", "slowmode_seconds", "user_limit")
    assert [[r.get(k) for k in keys] for r in old_rooms] == [[r.get(k) for k in keys] for r in new_rooms]
    for o, n in zip(old_rooms, new_rooms, strict=True):
        ids.same(o["id"], n["id"])
    for o, n in zip(old_rooms, new_rooms, strict=True):
        assert ids.map.get(o["parent_id"], o["parent_id"]) == n["parent_id"]


async def assert_same_file(client: Any, old_who: Any, new_who: Any, old_id: str, new_id: str, ids: Ids) -> None:
    ids.same(old_id, new_id)
    old = await fetch(client, old_who, old_id)
    new = await fetch(client, new_who, new_id)
    assert old.status_code == new.status_code == 200, (old.text, new.text)
    assert old.content == new.content and old.headers["content-type"] == new.headers["content-type"]


async def assert_same_history(client: Any, old_who: Any, new_who: Any, old_room: str, new_room: str,
                              ids: Ids) -> list[dict[str, Any]]:
    api = Api(client)
    old = await all_messages(client, old_who, old_room)
    new = await all_messages(client, new_who, new_room)
    assert len(old) == len(new) and old
    for o, n in zip(old, new, strict=True):
        ids.same(o["id"], n["id"])
        ids.same((o["author"] or {}).get("id"), (n["author"] or {}).get("id"))
        ids.same(o["recipient_id"], n["recipient_id"])
        for key in ("kind", "created_at", "edited_at", "pinned", "mention_everyone"):
            assert o[key] == n[key], (key, o, n)
        if o["system_event"]:
            for key in ("user_id", "actor_id"):
                ids.same(o["system_event"][key], n["system_event"][key])
            assert {**o["system_event"], "user_id": None, "actor_id": None} == \
                   {**n["system_event"], "user_id": None, "actor_id": None}
        assert (o["webhook"] or {}).get("name") == (n["webhook"] or {}).get("name")
        ids.same(o["reply_to_id"], n["reply_to_id"])
        for a, b in zip(o["attachments"], n["attachments"], strict=True):
            assert {k: v for k, v in a.items() if k not in ("id", "url", "uploader_id")} == \
                   {k: v for k, v in b.items() if k not in ("id", "url", "uploader_id")}
            ids.same(a.get("uploader_id"), b.get("uploader_id"))
            await assert_same_file(client, old_who, new_who, a["id"], b["id"], ids)
    for o, n in zip(old, new, strict=True):  # now that every id of the room is known
        assert ids.text(o["content"]) == n["content"]
        assert [ids.map.get(m, m) for m in o["mentions"]] == n["mentions"]
        assert [ids.map.get(m, m) for m in o["mention_channels"]] == n["mention_channels"]
        assert [(ids.text(r["emoji"]), r["count"]) for r in o["reactions"]] == \
               [(r["emoji"], r["count"]) for r in n["reactions"]]
        for r in o["reactions"]:
            who_old = await api.get(f"/channels/{old_room}/messages/{o['id']}/reactions/{r['emoji']}", old_who)
            who_new = await api.get(f"/channels/{new_room}/messages/{n['id']}/reactions/{ids.text(r['emoji'])}",
                                    new_who)
            assert sorted(ids.map[u["id"]] for u in who_old["users"]) == sorted(u["id"] for u in who_new["users"])
    old_pins = (await api.get(f"/channels/{old_room}/pins", old_who))["messages"]
    new_pins = (await api.get(f"/channels/{new_room}/pins", new_who))["messages"]
    assert [ids.map[p["id"]] for p in old_pins] == [p["id"] for p in new_pins]
    return new


async def test_a_round_trip_keeps_the_whole_guild(client, accounts, rt, meadhall, tmp_path, monkeypatch):
    from meadhall.porting.archive import history

    monkeypatch.setattr(history, "COMMIT_EVERY", 3)  # several transactions, as a large import has
    src = await build_source(client, accounts, rt, meadhall)
    api = Api(client)
    out = tmp_path / "exports" / "hall.tar.gz"
    out.parent.mkdir()
    exported = (await meadhall("export-guild", "--guild", src.guild["id"], "--out", str(out))).json
    assert exported == {"guild_id": src.guild["id"], "path": str(out), "rooms": 3, "messages": exported["messages"],
                        "files": 6, "bytes": out.stat().st_size}
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert [p.name for p in out.parent.iterdir()] == ["hall.tar.gz"], "no temporary file is left"

    # Alice takes her own place; everyone else becomes an imported author.
    mapping = tmp_path / "map.csv"
    mapping.write_text(f"{src.owner.id},alice\n")
    heir = await accounts.register("heir")
    imported = (await meadhall("import-guild", str(out), "--owner-email", "heir@example.com", "--map-users",
                               str(mapping))).json
    new_gid = imported["guild_id"]
    assert imported == {"guild_id": new_gid, "rooms": 3, "messages": exported["messages"], "files": 6,
                        "authors": {"mapped": 1, "imported": 4}}
    guild = (await api.get(f"/guilds/{new_gid}", heir))["guild"]
    assert guild["name"] == "Mead Hall" and guild["owner_id"] == heir.id

    ids = Ids()
    await assert_same_guild(client, src.owner, heir, src.guild["id"], new_gid, ids)
    new_rooms = {r["name"]: r["id"] for r in (await api.get(f"/guilds/{new_gid}/channels", heir))["channels"]}
    # Alice is mapped to herself, so she sees her private word on both sides; the ids are the same account.
    ids.map[src.owner.id] = src.owner.id
    ids.kept.add(src.owner.id)
    for name, old_room in src.rooms.items():
        await assert_same_history(client, src.owner, src.owner, old_room, new_rooms[name], ids)
    # Overrides, nicknames, roles held, bans and the webhook, through the API of the new guild.
    old_sagas = (await api.get(f"/channels/{src.rooms['sagas']}", src.owner))["channel"]
    new_sagas = (await api.get(f"/channels/{new_rooms['sagas']}", heir))["channel"]
    assert sorted((ids.map[o["id"]], o["type"], o["allow"], o["deny"]) for o in old_sagas["permission_overrides"]) \
        == sorted((o["id"], o["type"], o["allow"], o["deny"]) for o in new_sagas["permission_overrides"])
    assert len(new_sagas["permission_overrides"]) == 2
    old_members = (await api.get(f"/guilds/{src.guild['id']}/members", src.owner, params={"limit": 100}))["members"]
    new_members = (await api.get(f"/guilds/{new_gid}/members", heir, params={"limit": 100}))["members"]
    new_by_id = {m["user"]["id"]: m for m in new_members}
    for old in old_members:
        new = new_by_id[ids.map[old["user"]["id"]]]
        assert (new["nick"], new["roles"], new["joined_at"]) == (
            old["nick"], [ids.map[r] for r in old["roles"]], old["joined_at"])
        assert new["user"]["display_name"] == old["user"]["display_name"]
    assert new_by_id[ids.map[src.people["carol"].id]]["nick"] == "Carol the Wise"
    assert set(new_by_id) == {ids.map[m["user"]["id"]] for m in old_members} | {heir.id}
    old_bans = (await api.get(f"/guilds/{src.guild['id']}/bans", src.owner))["bans"]
    new_bans = (await api.get(f"/guilds/{new_gid}/bans", heir))["bans"]
    assert sorted((ids.map.get(b["user"]["id"], "dave"), b["reason"]) for b in old_bans) == \
        sorted((b["user"]["id"] if b["user"]["display_name"] != "dave" else "dave", b["reason"]) for b in new_bans)
    assert all(b["user"]["id"] not in new_by_id for b in new_bans), "a banned user is no member"
    hooks = (await api.get(f"/guilds/{new_gid}/webhooks", heir))["webhooks"]
    assert [(h["name"], h["channel_id"]) for h in hooks] == [("Herald", new_rooms["general"])]
    assert hooks[0].get("token") is None
    r = await client.post(f"/api/v1/webhooks/{hooks[0]['id']}/{src.hook_token}", json={"content": "still mine?"})
    assert r.status_code == 404, "the webhook's token did not come along"
    # The guild's icon and an imported author's public profile (avatar and bio), byte for byte.
    old_guild = (await api.get(f"/guilds/{src.guild['id']}", src.owner))["guild"]
    await assert_same_file(client, src.owner, heir, old_guild["icon_file_id"], guild["icon_file_id"], ids)
    old_bob = (await api.get(f"/users/{src.people['bob'].id}", src.owner))["user"]
    new_bob = (await api.get(f"/users/{ids.map[src.people['bob'].id]}", heir))["user"]
    assert (new_bob["bio"], new_bob["display_name"], "imported" in new_bob["badges"]) == (old_bob["bio"], "bob", True)
    await assert_same_file(client, src.owner, heir, old_bob["avatar"], new_bob["avatar"], ids)
    # Search finds imported messages like any other.
    found = await api.get(f"/channels/{new_rooms['sagas']}/messages/search", heir, params={"q": "saga revised"})
    assert [m["content"] for m in found["messages"]] == ["The saga, in full (revised)"]
    audit = await audit_rows(rt, new_gid, "guild.import")
    assert len(audit) == 1 and audit[0]["actor_id"] is None and audit[0]["data"]["source"] == "meadhall"
    assert audit[0]["data"]["messages"] == exported["messages"]


async def test_the_archive_holds_no_secret_and_no_direct_conversation(client, accounts, rt, meadhall, tmp_path):
    src = await build_source(client, accounts, rt, meadhall)
    out = tmp_path / "hall.tar.gz"
    exported = (await meadhall("export-guild", "--guild", src.guild["id"], "--out", str(out))).json
    members = members_of(out)
    names = set(members)
    assert {"manifest.json", "guild.json", "users.json"} <= names
    assert {n for n in names if n.startswith("messages/")} == {f"messages/{r['id']}.ndjson" for r in json.loads(
        members["guild.json"])["rooms"]}
    for name, data in members.items():
        for secret in src.secrets:
            assert secret.encode() not in data, f"{name} holds a secret"
        for word in (b"email", b"password", b"totp", b"token", b"session", b"passkey"):
            assert word not in data.lower() or name.startswith("files/"), (name, word)
    manifest = json.loads(members["manifest.json"])
    assert manifest["format"] == "meadhall-guild" and manifest["version"] == 1
    assert manifest["counts"] == {"rooms": 3, "messages": exported["messages"], "files": 6, "users": 5}
    assert set(manifest["sha256"]) == names - {"manifest.json"}
    people = json.loads(members["users.json"])["users"]
    assert {p["username"] for p in people} == {"alice", "bob", "carol", "eve", "dave"}
    assert all(set(p) == {"id", "username", "display_name", "avatar_file_id", "bio"} for p in people)
    lines = [json.loads(line) for n, d in members.items() if n.startswith("messages/") for line in d.splitlines()]
    assert len(lines) == exported["messages"]
    times = [line["created_at"] for line in lines]
    assert all(line["created_at"] for line in lines) and times
    hooks = json.loads(members["guild.json"])["webhooks"]
    assert hooks and all(set(h) == {"id", "room_id", "name", "avatar_file_id", "creator_id", "created_at"}
                         for h in hooks)


async def test_messages_are_written_oldest_first(client, accounts, rt, meadhall, tmp_path):
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    for i in range(250):
        await post(client, owner, guild["system_channel_id"], f"line {i}")
    out = tmp_path / "a.tar.gz"
    await meadhall("export-guild", "--guild", guild["id"], "--out", str(out))
    room_lines = members_of(out)[f"messages/{guild['system_channel_id']}.ndjson"].splitlines()
    contents = [json.loads(line)["content"] for line in room_lines]
    assert contents[-250:] == [f"line {i}" for i in range(250)]
    assert [int(json.loads(line)["id"]) for line in room_lines] == sorted(int(json.loads(x)["id"])
                                                                          for x in room_lines)


async def test_an_existing_path_is_refused(client, accounts, rt, meadhall, tmp_path):
    owner = await accounts.register("owner")
    guild = await make_guild(client, owner)
    out = tmp_path / "exports" / "taken.tar.gz"
    out.parent.mkdir()
    out.write_bytes(b"precious")
    ran = await meadhall("export-guild", "--guild", guild["id"], "--out", str(out))
    assert ran.error["code"] == "export.exists"
    assert out.read_bytes() == b"precious"
    assert sorted(p.name for p in out.parent.iterdir()) == ["taken.tar.gz"]
    link = out.parent / "link.tar.gz"
    link.symlink_to(tmp_path / "nowhere")
    assert (await meadhall("export-guild", "--guild", guild["id"], "--out", str(link))).error["code"] == \
        "export.exists"
    unknown = await meadhall("export-guild", "--guild", "12345", "--out", str(tmp_path / "x.tar.gz"))
    assert unknown.error["code"] == "guild.not_found" and not (tmp_path / "x.tar.gz").exists()


async def test_mapped_users_are_the_local_accounts(client, accounts, rt, meadhall, tmp_path):
    api = Api(client)
    owner = await accounts.register("owner")
    bob = await accounts.register("bob")
    guild = await make_guild(client, owner)
    await add_member(rt, guild["id"], bob)
    await post(client, bob, guild["system_channel_id"], "bob speaks")
    out = tmp_path / "a.tar.gz"
    await meadhall("export-guild", "--guild", guild["id"], "--out", str(out))
    mapping = tmp_path / "map.csv"
    mapping.write_text(f"# source,local\n{bob.id},bob\n")
    heir = await accounts.register("heir")
    result = (await meadhall("import-guild", str(out), "--owner-email", "heir@example.com", "--name", "Second Hall",
                             "--map-users", str(mapping))).json
    assert result["authors"] == {"mapped": 1, "imported": 1}
    assert (await api.get(f"/guilds/{result['guild_id']}", heir))["guild"]["name"] == "Second Hall"
    # Bob is a member of the new guild as himself, and reads his message there.
    mine = {g["id"] for g in (await api.get("/users/@me/guilds", bob))["guilds"]}
    assert result["guild_id"] in mine
    rooms = (await api.get(f"/guilds/{result['guild_id']}/channels", bob))["channels"]
    said = [m for m in await all_messages(client, bob, rooms[0]["id"]) if m["content"] == "bob speaks"]
    assert [m["author"]["id"] for m in said] == [bob.id]
    # The old owner became an imported author: not a session, not an email.
    old_owner = [m for m in (await api.get(f"/guilds/{result['guild_id']}/members", heir))["members"]
                 if m["user"]["display_name"] == "owner" and m["user"]["id"] != owner.id]
    assert len(old_owner) == 1 and "imported" in old_owner[0]["user"]["badges"]

    bad_name = await meadhall("import-guild", str(out), "--owner-email", "heir@example.com", "--name", "x\nHall")
    assert bad_name.error["code"] == "validation.failed" and "--name" in bad_name.error["message"]
    unknown = tmp_path / "unknown.csv"
    unknown.write_text(f"{bob.id},nobody_here\n")
    ran = await meadhall("import-guild", str(out), "--owner-email", "heir@example.com", "--map-users", str(unknown))
    assert ran.error["code"] == "user.not_found"
    assert len((await api.get("/users/@me/guilds", heir))["guilds"]) == 1


async def test_the_export_is_one_consistent_read(client, accounts, rt, meadhall, tmp_path, monkeypatch):
    """What is written while the export runs (a message, a member, a reaction) is not in the archive, and
    the archive agrees with itself: the manifest's counts are its lines and its users are those it names."""
    from meadhall.porting.archive import export_read

    owner = await accounts.register("owner")
    late = await accounts.register("late")
    guild = await make_guild(client, owner)
    general = guild["system_channel_id"]
    first = await post(client, owner, general, "before the export")
    loop = asyncio.get_running_loop()
    real = export_read.count_messages

    async def meanwhile() -> None:
        await add_member(rt, guild["id"], late)
        await post(client, late, general, "written during the export")
        await react(client, late, general, first["id"], "👍")

    async def count_after_a_write(*args: Any) -> Any:
        # The guild is read, its messages not yet: the service writes now, on the test's own loop (the
        # command runs on a thread of its own), and then the export goes on reading.
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(meanwhile(), loop))
        return await real(*args)

    monkeypatch.setattr(export_read, "count_messages", count_after_a_write)
    out = tmp_path / "a.tar.gz"
    exported = (await meadhall("export-guild", "--guild", guild["id"], "--out", str(out))).json
    members = members_of(out)
    lines = [json.loads(x) for x in members[f"messages/{general}.ndjson"].splitlines()]
    assert "written during the export" not in [m["content"] for m in lines]
    assert [m for m in lines if m["id"] == first["id"]][0]["reactions"] == []
    assert exported["messages"] == len(lines) == json.loads(members["manifest.json"])["counts"]["messages"]
    people = json.loads(members["users.json"])["users"]
    assert [p["username"] for p in people] == ["owner"]
    assert [m["user_id"] for m in json.loads(members["guild.json"])["members"]] == [owner.id]
    assert len(await all_messages(client, owner, general)) == len(lines) + 2  # the write itself succeeded


async def test_nobody_sees_the_guild_before_it_is_whole(client, accounts, rt, meadhall, tmp_path, monkeypatch):
    """The import commits in batches; between them the new guild is in nobody's list, not even its owner's
    or a mapped member's, and then it is in both."""
    from meadhall.porting import transactions
    from meadhall.porting.archive import history

    api = Api(client)
    owner = await accounts.register("owner")
    bob = await accounts.register("bob")
    guild = await make_guild(client, owner)
    await add_member(rt, guild["id"], bob)
    for i in range(6):
        await post(client, bob, guild["system_channel_id"], f"line {i}")
    out = tmp_path / "a.tar.gz"
    await meadhall("export-guild", "--guild", guild["id"], "--out", str(out))
    heir = await accounts.register("heir")
    mapping = tmp_path / "map.csv"
    mapping.write_text(f"{bob.id},bob\n")
    monkeypatch.setattr(history, "COMMIT_EVERY", 2)
    loop = asyncio.get_running_loop()
    seen: list[tuple[int, int]] = []
    real_next = transactions.Batches.next

    async def lists() -> tuple[int, int]:
        return (len((await api.get("/users/@me/guilds", heir))["guilds"]),
                len((await api.get("/users/@me/guilds", bob))["guilds"]))

    async def looking_next(self: Any) -> Any:
        seen.append(await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(lists(), loop)))
        return await real_next(self)

    monkeypatch.setattr(transactions.Batches, "next", looking_next)
    result = (await meadhall("import-guild", str(out), "--owner-email", "heir@example.com", "--map-users",
                             str(mapping))).json
    assert len(seen) >= 3 and set(seen) == {(0, 1)}, seen  # bob sees only the old guild meanwhile
    assert await lists() == (1, 2)
    assert result["messages"] == len(await all_messages(client, heir, (await api.get(
        f"/guilds/{result['guild_id']}/channels", heir))["channels"][0]["id"]))
