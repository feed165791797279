"""A ban with `delete_message_seconds` (OpenAPI: banUser; docs/moderation.md): the banned user's messages in the
guild from that many seconds before the ban go with their files, mention counts, pins and the rooms' last
messages kept right; one MESSAGE_DELETE_BULK per room to its viewers (a private message's id only to its two
parties); the audit entry counts them. On SQLite and PostgreSQL+Redis, and over a real gateway."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.delivery import online
from tests.support.factories import add_member, audit_rows, channel_row, file_ids
from tests.support.files import attached, fetch
from tests.support.guilds import override, room
from tests.support.http import API, error_code
from tests.support.messages import history, pin, post
from tests.support.personas import StaffedHall, staffed_hall

HOUR = 3600


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"RATE_LIMITS": {"messages.send": "1000/60"}}


class Scene:
    """A staffed hall with a bystander (a plain member who cannot see `staff`), the member to ban able to see
    `general` and `staff`, and messages: one of the member's two hours old, then recent ones."""

    def __init__(self, h: StaffedHall, bystander: Any, general: str, staff: str) -> None:
        self.h, self.bystander, self.general, self.staff = h, bystander, general, staff
        self.old: dict[str, Any] = {}
        self.recent: dict[str, dict[str, Any]] = {}
        self.kept: dict[str, dict[str, Any]] = {}


async def setup_scene(client: Any, accounts: Any, rt: Any, clock: Any) -> Scene:
    h = await staffed_hall(client, accounts, rt, "BAN_MEMBERS|MANAGE_MESSAGES")
    bystander = await accounts.register("bystander")
    await add_member(rt, h.id, bystander)
    general = h.guild["system_channel_id"]
    staff = (await room(client, h.owner, h.id, name="staff"))["id"]
    await override(client, h.owner, staff, h.id, "role", deny="VIEW_CHANNEL")
    await override(client, h.owner, staff, h.member.id, "member", allow="VIEW_CHANNEL")
    await override(client, h.owner, staff, h.roles["mod"]["id"], "role", allow="VIEW_CHANNEL")
    s = Scene(h, bystander, general, staff)

    s.old = await post(client, h.member, general, "an old message")
    s.kept["staff_before"] = await post(client, h.owner, staff, "the owner in staff")
    clock.advance(2 * HOUR)
    file = await attached(client, h.member, general)
    s.recent["file"] = await post(client, h.member, general, "with a file", attachment_ids=[file["id"]])
    s.recent["mention"] = await post(client, h.member, general, f"hey <@{bystander.id}>")
    s.recent["private"] = await post(client, h.member, general, f"/ls <@{bystander.id}> just for you")
    s.recent["staff"] = await post(client, h.member, staff, "recent in staff")
    await pin(client, h.owner, staff, s.recent["staff"]["id"])
    s.kept["general_after"] = await post(client, h.owner, general, "the owner after")
    return s


async def ban(client: Any, s: Scene, **body: Any) -> Any:
    return await client.put(s.h.url(f"/bans/{s.h.member.id}"), json=body, headers=s.h.mod.headers)


async def contents(client: Any, account: Any, channel_id: str) -> list[str]:
    page = await history(client, account, channel_id)
    return [m["content"] for m in page["messages"] if m["kind"] != "system"]


async def mentions_of(client: Any, account: Any, channel_id: str) -> int:
    resp = await client.get(f"{API}/users/@me/read-states", headers=account.headers)
    return next((r["mention_count"] for r in resp.json()["read_states"] if r["channel_id"] == channel_id), 0)


async def test_a_ban_deletes_the_recent_messages_with_files_and_counts_them(client, accounts, rt, clock,
                                                                           capture_events):
    s = await setup_scene(client, accounts, rt, clock)
    h = s.h
    file_id = s.recent["file"]["attachments"][0]["id"]
    assert await mentions_of(client, s.bystander, s.general) == 2  # the mention and the private message
    assert (await channel_row(rt, s.staff))["last_message_id"] == int(s.recent["staff"]["id"])
    # History read before the ban: the page cache holds the messages, and must not serve them afterwards.
    assert "with a file" in await contents(client, h.owner, s.general)
    assert "recent in staff" in await contents(client, h.owner, s.staff)
    await capture_events.reset()

    assert (await ban(client, s, reason="spam", delete_message_seconds=HOUR)).status_code == 204
    await capture_events.settle()

    assert await contents(client, h.owner, s.general) == ["the owner after", "an old message"]
    assert await contents(client, h.owner, s.staff) == ["the owner in staff"]
    pins = await client.get(f"{API}/channels/{s.staff}/pins", headers=h.owner.headers)
    assert pins.json()["messages"] == []
    assert await mentions_of(client, s.bystander, s.general) == 0
    assert (await channel_row(rt, s.staff))["last_message_id"] == int(s.kept["staff_before"]["id"])
    assert int(file_id) not in await file_ids(rt)
    assert (await fetch(client, h.owner, file_id)).status_code == 404
    [entry] = await audit_rows(rt, h.id, "member.ban")
    assert entry["data"] == {"was_member": True, "deleted_messages": 4} and entry["reason"] == "spam"

    bulk = {(e.data["channel_id"], tuple(e.data["ids"])): set(e.users)
            for e in capture_events.of_type("MESSAGE_DELETE_BULK")}
    public = tuple(s.recent[k]["id"] for k in ("file", "mention"))
    with_private = tuple(sorted((*public, s.recent["private"]["id"]), key=int))
    assert bulk == {
        (s.general, public): h.ids(h.owner, h.mod),
        (s.general, with_private): h.ids(s.bystander),  # the recipient; the author is banned and gone
        (s.staff, (s.recent["staff"]["id"],)): h.ids(h.owner, h.mod),  # not the bystander, who cannot see it
    }
    assert all(e.data["guild_id"] == h.id for e in capture_events.of_type("MESSAGE_DELETE_BULK"))
    assert capture_events.of_type("MESSAGE_DELETE") == []


async def test_without_deletion_nothing_goes_and_the_count_is_zero(client, accounts, rt, clock, capture_events):
    s = await setup_scene(client, accounts, rt, clock)
    await capture_events.reset()
    assert (await ban(client, s, delete_message_seconds=0)).status_code == 204
    await capture_events.settle()
    assert "with a file" in await contents(client, s.h.owner, s.general)
    assert capture_events.of_type("MESSAGE_DELETE_BULK") == []
    [entry] = await audit_rows(rt, s.h.id, "member.ban")
    assert entry["data"] == {"was_member": True, "deleted_messages": 0}


async def test_a_week_reaches_older_messages_and_a_non_member_can_be_purged(client, accounts, rt, clock):
    s = await setup_scene(client, accounts, rt, clock)
    h = s.h
    resp = await client.delete(f"{API}/users/@me/guilds/{h.id}", headers=h.member.headers)
    assert resp.status_code == 204, resp.text
    assert (await ban(client, s, delete_message_seconds=604800)).status_code == 204
    assert await contents(client, h.owner, s.general) == ["the owner after"]
    [entry] = await audit_rows(rt, h.id, "member.ban")
    assert entry["data"] == {"was_member": False, "deleted_messages": 5}


async def test_the_period_is_validated_and_a_refused_ban_deletes_nothing(client, accounts, rt, clock):
    s = await setup_scene(client, accounts, rt, clock)
    h = s.h
    for value in (-1, 604801, "an hour", 1.5, "3600", True, None):
        resp = await ban(client, s, delete_message_seconds=value)
        assert resp.status_code == 422 and error_code(resp) == "validation.failed", value
    resp = await client.put(h.url(f"/bans/{h.member.id}"), json={"delete_message_seconds": HOUR},
                            headers=s.bystander.headers)
    assert resp.status_code == 403 and error_code(resp) == "perm.denied"
    assert len(await contents(client, h.owner, s.general)) == 4  # the owner sees all but the private one


async def test_a_whole_number_written_with_a_fraction_is_that_number(client, accounts, rt, clock):
    """JSON has one number type: 3600.0 is 3600 seconds (JSON Schema's integer says so too)."""
    s = await setup_scene(client, accounts, rt, clock)
    assert (await ban(client, s, delete_message_seconds=float(604800))).status_code == 204
    [entry] = await audit_rows(rt, s.h.id, "member.ban")
    assert entry["data"]["deleted_messages"] > 0


async def test_viewers_receive_message_delete_bulk_over_the_gateway_and_others_do_not(gateway, client, accounts,
                                                                                      rt, clock):
    s = await setup_scene(client, accounts, rt, clock)
    h = s.h
    owner, bystander = await online(gateway, client, h.owner, s.bystander)
    assert (await ban(client, s, delete_message_seconds=HOUR)).status_code == 204

    got = [await owner.dispatch("MESSAGE_DELETE_BULK") for _ in range(2)]
    assert sorted((d["channel_id"], len(d["ids"])) for d in got) == sorted([(s.general, 2), (s.staff, 1)])
    seen = await bystander.dispatch("MESSAGE_DELETE_BULK")
    assert seen["channel_id"] == s.general and seen["guild_id"] == h.id
    assert seen["ids"] == sorted([s.recent[k]["id"] for k in ("file", "mention", "private")], key=int)
    await bystander.no_dispatch("MESSAGE_DELETE_BULK")  # nothing about `staff`, which they cannot see
