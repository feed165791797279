"""Room webhooks (OpenAPI: createWebhook, listChannelWebhooks, listGuildWebhooks, getWebhook, updateWebhook,
deleteWebhook, regenerateWebhookToken, setWebhookAvatar, removeWebhookAvatar, executeWebhook; docs/webhooks.md):
the object and its one-time token, permissions and visibility, step-up, the per-room limit, audit, and execution
without a session: the token (hashed, compared in constant time, a wrong one answers like an unknown webhook),
the snapshot kept on the message, the creator's files, the rate limit, and MESSAGE_CREATE to viewers only."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest
from sqlalchemy import select

from meadhall.db.schema import files, webhooks
from tests.support.factories import audit_rows
from tests.support.files import attached, png, stored, upload
from tests.support.guilds import give, make_role, override, room
from tests.support.http import Api, error
from tests.support.messages import delete_message, edit_message, history
from tests.support.personas import hall

WEBHOOK_FIELDS = {"id", "guild_id", "channel_id", "name", "avatar", "creator_id", "created_at", "token", "url"}
STEP_UP_WINDOW = 600


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": "https://chat.example.com"}


async def create(api: Api, who: Any, channel_id: str, name: str = "Deploys", *, expect: int = 201) -> Any:
    body = await api.post(f"/channels/{channel_id}/webhooks", who, json={"name": name}, expect=expect)
    return body["webhook"] if expect == 201 else body


async def execute(client: Any, hook: dict[str, Any], *, token: str | None = None, expect: int = 201,
                  **body: Any) -> Any:
    r = await client.post(f"/api/v1/webhooks/{hook['id']}/{token or hook['token']}", json=body)
    assert r.status_code == expect, r.text
    return r.json()


async def test_create_shows_the_token_once_and_lists_never_do(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general, "  Deploys  ")
    assert set(hook) == WEBHOOK_FIELDS
    assert (hook["name"], hook["channel_id"], hook["guild_id"], hook["creator_id"], hook["avatar"]) == (
        "Deploys", h.general, h.id, h.owner.id, None)
    assert len(hook["token"]) >= 40
    assert hook["url"] == f"https://chat.example.com/api/v1/webhooks/{hook['id']}/{hook['token']}"
    shown = {**hook, "token": None, "url": None}
    assert await api.get(f"/channels/{h.general}/webhooks", h.owner) == {"webhooks": [shown]}
    assert await api.get(f"/guilds/{h.id}/webhooks", h.owner) == {"webhooks": [shown]}
    assert await api.get(f"/webhooks/{hook['id']}", h.owner) == {"webhook": shown}
    # Only the digest is stored.
    async with rt.engine.connect() as conn:
        stored_hash = (await conn.execute(select(webhooks.c.token_hash))).scalar_one()
    assert stored_hash == hashlib.sha256(hook["token"].encode()).hexdigest() and hook["token"] not in stored_hash
    [entry] = await audit_rows(rt, h.id, "webhook.create")
    assert (entry["target_type"], str(entry["target_id"]), str(entry["actor_id"])) == ("webhook", hook["id"], h.owner.id)
    assert entry["data"] == {"name": "Deploys", "channel_id": h.general}


async def test_names_are_checked(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    for bad in ("", "   ", "x" * 81, "two\nlines"):
        r = await api.request("POST", f"/channels/{h.general}/webhooks", h.owner, json={"name": bad}, expect=422)
        assert error(r) == (422, "validation.failed"), bad
    await create(api, h.owner, h.general, "x" * 80)


async def test_permissions_and_visibility(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    # A member who can view the room but lacks MANAGE_WEBHOOKS: 403 everywhere.
    for method, path, body in (("GET", f"/channels/{h.general}/webhooks", None),
                               ("GET", f"/guilds/{h.id}/webhooks", None),
                               ("POST", f"/channels/{h.general}/webhooks", {"name": "x"}),
                               ("GET", f"/webhooks/{hook['id']}", None),
                               ("PATCH", f"/webhooks/{hook['id']}", {"name": "y"}),
                               ("POST", f"/webhooks/{hook['id']}/token", None),
                               ("DELETE", f"/webhooks/{hook['id']}/avatar", None),
                               ("DELETE", f"/webhooks/{hook['id']}", None)):
        r = await api.request(method, path, h.a, json=body, expect=None)
        assert error(r) == (403, "perm.denied"), (method, path)
        assert r.json()["error"]["permission"] == "MANAGE_WEBHOOKS"
    # An outsider sees neither the guild, the room nor the webhook.
    assert error(await api.request("GET", f"/guilds/{h.id}/webhooks", h.outsider, expect=None)) == (404, "guild.not_found")
    assert error(await api.request("GET", f"/channels/{h.general}/webhooks", h.outsider,
                                   expect=None)) == (404, "channel.not_found")
    assert error(await api.request("GET", f"/webhooks/{hook['id']}", h.outsider, expect=None)) == (404, "webhook.not_found")
    assert error(await api.request("GET", "/webhooks/123", h.owner, expect=None)) == (404, "webhook.not_found")
    # A role with MANAGE_WEBHOOKS can manage; a room override taking it away (or hiding the room) wins there.
    managers = await make_role(client, h.owner, h.id, "hooks", "MANAGE_WEBHOOKS")
    await give(client, h.owner, h.id, h.a, managers["id"])
    hidden = await room(client, h.owner, h.id, name="staff")
    secret = await create(api, h.owner, hidden["id"], "Secret")
    assert {w["id"] for w in (await api.get(f"/guilds/{h.id}/webhooks", h.a))["webhooks"]} == {hook["id"], secret["id"]}
    await override(client, h.owner, hidden["id"], h.id, "role", deny="VIEW_CHANNEL")
    await override(client, h.owner, hidden["id"], managers["id"], "role", deny="VIEW_CHANNEL")
    assert [w["id"] for w in (await api.get(f"/guilds/{h.id}/webhooks", h.a))["webhooks"]] == [hook["id"]]
    assert error(await api.request("GET", f"/webhooks/{secret['id']}", h.a, expect=None)) == (404, "webhook.not_found")
    await api.patch(f"/webhooks/{hook['id']}", h.a, json={"name": "Renamed"})


async def test_step_up_is_needed_to_create_and_to_regenerate(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    clock.advance(STEP_UP_WINDOW + 1)
    for path in (f"/channels/{h.general}/webhooks", f"/webhooks/{hook['id']}/token"):
        r = await api.request("POST", path, h.owner, json={"name": "Later"}, expect=None)
        assert error(r) == (403, "auth.step_up_required"), path
    assert len((await api.get(f"/channels/{h.general}/webhooks", h.owner))["webhooks"]) == 1
    await execute(client, hook, content="the old token still works")  # nothing was regenerated
    # Other management needs none.
    await api.patch(f"/webhooks/{hook['id']}", h.owner, json={"name": "Renamed"})
    r = await client.post("/api/v1/auth/step-up", json={"password": h.owner["password"]}, headers=h.owner.headers)
    assert r.status_code == 200, r.text
    await create(api, h.owner, h.general, "Later")


async def test_text_rooms_only_and_at_most_fifteen(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    voice = await room(client, h.owner, h.id, name="Voice", type="voice")
    category = await room(client, h.owner, h.id, name="Cat", type="category")
    for target in (voice, category):
        r = await api.request("POST", f"/channels/{target['id']}/webhooks", h.owner, json={"name": "x"}, expect=None)
        assert error(r) == (422, "channel.wrong_type")
    for i in range(15):
        await create(api, h.owner, h.general, f"hook {i}")
    assert error(await api.request("POST", f"/channels/{h.general}/webhooks", h.owner, json={"name": "16"},
                                   expect=None)) == (409, "webhook.limit_reached")
    other = await room(client, h.owner, h.id, name="other")
    await create(api, h.owner, other["id"], "elsewhere")


async def test_rename_and_move(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    other = await room(client, h.owner, h.id, name="other")
    moved = (await api.patch(f"/webhooks/{hook['id']}", h.owner, json={"name": "Builds", "channel_id": other["id"]}))["webhook"]
    assert (moved["name"], moved["channel_id"], moved["token"]) == ("Builds", other["id"], None)
    [entry] = await audit_rows(rt, h.id, "webhook.update")
    assert entry["data"] == {"name": "Builds",
                             "changes": {"name": ["Deploys", "Builds"], "channel_id": [h.general, other["id"]]}}
    # Nothing changed: no entry.
    await api.patch(f"/webhooks/{hook['id']}", h.owner, json={"name": "Builds"})
    assert len(await audit_rows(rt, h.id, "webhook.update")) == 1
    # The message of an execution lands in the new room.
    message = (await execute(client, hook, content="moved"))["message"]
    assert message["channel_id"] == other["id"]
    voice = await room(client, h.owner, h.id, name="Voice", type="voice")
    r = await api.request("PATCH", f"/webhooks/{hook['id']}", h.owner, json={"channel_id": voice["id"]}, expect=None)
    assert error(r) == (422, "channel.wrong_type")
    foreign = await Api(client).post("/guilds", h.outsider, json={"name": "Elsewhere"}, expect=201)
    r = await api.request("PATCH", f"/webhooks/{hook['id']}", h.owner,
                          json={"channel_id": foreign["guild"]["system_channel_id"]}, expect=None)
    assert error(r) == (404, "channel.not_found")
    r = await api.request("PATCH", f"/webhooks/{hook['id']}", h.owner, json={"name": None}, expect=None)
    assert error(r) == (422, "validation.failed")


async def test_execution_posts_a_message_with_the_snapshot_to_viewers(client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    # bob may not view the room: he receives nothing.
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    await capture_events.reset()
    body = await execute(client, hook, content=f"Build <@{h.a.id}> passed /me waves")
    message = body["message"]
    assert message["author"] is None and message["kind"] == "normal"
    assert message["webhook"] == {"id": hook["id"], "name": "Deploys", "avatar": None}
    assert message["content"] == f"Build <@{h.a.id}> passed /me waves" and message["mentions"] == [h.a.id]
    await capture_events.settle()
    [ev] = capture_events.of_type("MESSAGE_CREATE")
    assert ev.data == message
    assert set(ev.users) == {int(h.owner.id), int(h.a.id)}
    # Never parsed as a command; the overrides win on this message only.
    again = (await execute(client, hook, content="/me waves", username="Release bot",
                           avatar_url="https://cdn.example.com/bot.png"))["message"]
    assert (again["kind"], again["content"]) == ("normal", "/me waves")
    assert again["webhook"] == {"id": hook["id"], "name": "Release bot", "avatar": "https://cdn.example.com/bot.png"}
    page = await history(client, h.a, h.general)
    assert [m["webhook"] for m in page["messages"][:2]] == [again["webhook"], message["webhook"]]
    # Webhook messages cannot be edited by anyone; a member with MANAGE_MESSAGES may delete one, others may not.
    await edit_message(client, h.owner, h.general, message["id"], "changed", expect=403)
    await delete_message(client, h.a, h.general, again["id"], expect=403)
    await delete_message(client, h.owner, h.general, again["id"])
    # The mention counts for the mentioned member.
    states = await api.get("/users/@me/read-states", h.a)
    assert [s["mention_count"] for s in states["read_states"] if s["channel_id"] == h.general] == [1]


async def test_execution_refusals(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    wrong = hook["token"][:-1] + ("A" if hook["token"][-1] != "A" else "B")
    for path in (f"/webhooks/{hook['id']}/{wrong}", f"/webhooks/999{hook['id']}/{hook['token']}",
                 f"/webhooks/not-an-id/{hook['token']}"):
        r = await client.post(f"/api/v1{path}", json={"content": "hi"})
        assert error(r) == (404, "webhook.not_found"), path
    for body in ({}, {"content": "   "}, {"content": "x" * 4001}, {"content": "hi", "username": ""},
                 {"content": "hi", "username": "x" * 81}, {"content": "hi", "avatar_url": "ftp://example.com/a.png"},
                 {"content": "hi", "avatar_url": "https://e.com/" + "a" * 2048},
                 {"content": "hi", "avatar_url": "javascript:alert(1)"}):
        await execute(client, hook, expect=422, **body)
    await execute(client, hook, content="x" * 4000)


async def test_the_token_is_compared_in_constant_time(client, accounts, rt, monkeypatch):
    h = await hall(client, accounts, rt)
    hook = await create(Api(client), h.owner, h.general)
    seen: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    await execute(client, hook, token="wrong-token", expect=404)
    assert seen and seen[-1][1] == hashlib.sha256(hook["token"].encode()).hexdigest().encode()
    count = len(seen)
    await execute(client, hook, content="right")
    assert len(seen) > count


async def test_thirty_executions_per_minute_per_webhook(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    other = await create(api, h.owner, h.general, "Other")
    # Wrong tokens take nothing from the webhook's allowance.
    for _ in range(5):
        await execute(client, hook, token="guess", expect=404)
    for i in range(30):
        await execute(client, hook, content=f"n{i}")
    r = await client.post(f"/api/v1/webhooks/{hook['id']}/{hook['token']}", json={"content": "one too many"})
    assert error(r) == (429, "rate_limited")
    assert r.json()["error"]["bucket"] == "webhooks.execute" and "Retry-After" in r.headers
    await execute(client, other, content="another webhook has its own bucket")
    clock.advance(60)
    await execute(client, hook, content="a minute later")


async def test_regeneration_invalidates_the_old_token(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    fresh = (await api.post(f"/webhooks/{hook['id']}/token", h.owner, expect=200))["webhook"]
    assert fresh["token"] != hook["token"] and fresh["url"].endswith(f"/{fresh['id']}/{fresh['token']}")
    await execute(client, hook, expect=404, content="old")
    await execute(client, fresh, content="new")
    [entry] = await audit_rows(rt, h.id, "webhook.token_reset")
    assert (str(entry["target_id"]), str(entry["actor_id"]), entry["data"]) == (hook["id"], h.owner.id, {"name": "Deploys"})


async def test_avatar_snapshot_and_deletion(client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    r = await upload(client, h.a, f"/webhooks/{hook['id']}/avatar", png())
    assert error(r) == (403, "perm.denied")
    r = await upload(client, h.owner, f"/webhooks/{hook['id']}/avatar", png())
    assert r.status_code == 200, r.text
    avatar = r.json()["webhook"]["avatar"]
    assert avatar is not None and stored(settings, avatar).exists()
    # Served like a user avatar to any signed-in user.
    assert (await client.get(f"/files/{avatar}", headers=h.outsider.headers)).status_code == 200
    [entry] = await audit_rows(rt, h.id, "webhook.avatar_update")
    assert entry["data"] == {"name": "Deploys", "changes": {"avatar": [None, avatar]}}
    message = (await execute(client, hook, content="with avatar"))["message"]
    assert message["webhook"]["avatar"] == f"/files/{avatar}"
    # Replacing deletes the old file; so does removing and deleting the webhook.
    r = await upload(client, h.owner, f"/webhooks/{hook['id']}/avatar", png(color=(1, 2, 3)))
    second = r.json()["webhook"]["avatar"]
    assert second != avatar and not stored(settings, avatar).exists()
    removed = await api.delete(f"/webhooks/{hook['id']}/avatar", h.owner, expect=200)
    assert removed["webhook"]["avatar"] is None and not stored(settings, second).exists()
    r = await upload(client, h.owner, f"/webhooks/{hook['id']}/avatar", png())
    third = r.json()["webhook"]["avatar"]
    await api.delete(f"/webhooks/{hook['id']}", h.owner)
    assert not stored(settings, third).exists()
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(files.c.id).where(files.c.id == int(third)))).first() is None
    [deleted] = await audit_rows(rt, h.id, "webhook.delete")
    assert str(deleted["target_id"]) == hook["id"] and deleted["data"]["name"] == "Deploys"
    await execute(client, hook, expect=404, content="gone")
    assert error(await api.request("GET", f"/webhooks/{hook['id']}", h.owner, expect=None)) == (404, "webhook.not_found")
    # The message keeps its snapshot.
    page = await history(client, h.owner, h.general)
    assert any(m["id"] == message["id"] and m["webhook"]["name"] == "Deploys" for m in page["messages"])


async def test_files_of_the_creator(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    hook = await create(api, h.owner, h.general)
    mine = await attached(client, h.owner, h.general, b"report", "report.txt")
    theirs = await attached(client, h.a, h.general, b"alice's", "alice.txt")
    await execute(client, hook, expect=422, attachment_ids=[theirs["id"]])
    message = (await execute(client, hook, attachment_ids=[mine["id"]]))["message"]
    assert message["attachment_ids"] == [mine["id"]] and message["attachments"][0]["original_name"] == "report.txt"
    await execute(client, hook, expect=422, content="again", attachment_ids=[mine["id"]])  # already sent
    # Viewers of the room may fetch it.
    assert (await client.get(f"/files/{mine['id']}", headers=h.b.headers)).status_code == 200


async def test_deleting_the_room_deletes_its_webhooks(client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    other = await room(client, h.owner, h.id, name="other")
    hook = await create(api, h.owner, other["id"])
    await api.delete(f"/channels/{other['id']}", h.owner)
    await execute(client, hook, expect=404, content="room gone")
    assert (await api.get(f"/guilds/{h.id}/webhooks", h.owner))["webhooks"] == []


async def test_mentions_are_handed_to_the_message_sent_hooks(client, accounts, rt):
    from meadhall.messages import sent_hooks

    h = await hall(client, accounts, rt)
    hook = await create(Api(client), h.owner, h.general)
    seen: list[Any] = []
    sent_hooks.message_sent.add("test-webhooks", lambda _rt, sent: seen.append(sent))
    try:
        message = (await execute(client, hook, content=f"ping <@{h.a.id}> and <@{h.outsider.id}>"))["message"]
    finally:
        sent_hooks.message_sent.discard("test-webhooks")
    [sent] = seen
    # Only mentioned users who may view the room; the outsider is mentioned but sees nothing.
    assert (sent.message, sent.mentioned, sent.conversation, sent.guild_id) == (message, [int(h.a.id)], [], int(h.id))


async def test_an_avatar_left_by_a_cascade_is_found_by_file_maintenance(client, accounts, rt, clock, settings):
    from meadhall.db.schema import channels
    from meadhall.files.cleanup import orphan_files

    h = await hall(client, accounts, rt)
    api = Api(client)
    other = await room(client, h.owner, h.id, name="other")
    hook = await create(api, h.owner, other["id"])
    kept = await create(api, h.owner, h.general, "Kept")
    avatar = (await upload(client, h.owner, f"/webhooks/{hook['id']}/avatar", png())).json()["webhook"]["avatar"]
    kept_avatar = (await upload(client, h.owner, f"/webhooks/{kept['id']}/avatar", png())).json()["webhook"]["avatar"]
    async with rt.engine.begin() as conn:  # behind the service's back: the room's row goes, its webhooks cascade
        await conn.execute(channels.delete().where(channels.c.id == int(other["id"])))
    clock.advance(hours=25)
    assert [f["id"] for f in (await orphan_files(rt))["files"]] == [avatar]
    await orphan_files(rt, remove=True)
    assert not stored(settings, avatar).exists() and stored(settings, kept_avatar).exists()
