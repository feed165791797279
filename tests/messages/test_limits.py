"""Message rate limits, slowmode and the instance administrator's audited bypass (OpenAPI: sendMessage;
docs/reference/limits.md, docs/reference/permissions.md; the audit action `limits.bypass`), through HTTP."""

from __future__ import annotations

import math

import pytest

from meadhall.core import permissions as perms
from tests.support.factories import audit_rows, insert_role, make_admin, message_count
from tests.support.guilds import room
from tests.support.http import err
from tests.support.messages import events, post, send, url
from tests.support.personas import hall

P = perms.P


@pytest.fixture
def settings_overrides(request):
    """Per-test configuration through indirect parametrisation; none by default."""
    return getattr(request, "param", {})


def limited(r, bucket):
    assert r.status_code == 429, r.text
    body = err(r)
    assert body["code"] == "rate_limited" and body["bucket"] == bucket, body
    assert r.headers["X-RateLimit-Bucket"] == bucket
    assert r.headers["X-RateLimit-Remaining"] == "0"
    assert int(r.headers["Retry-After"]) == max(1, math.ceil(body["retry_after"]))
    return body["retry_after"]


async def set_slowmode(client, owner, channel_id, seconds):
    r = await client.patch(f"/api/v1/channels/{channel_id}", json={"slowmode_seconds": seconds},
                           headers=owner.headers)
    assert r.status_code == 200, r.text


async def bypasses(rt, guild_id):
    return [(e["data"]["limit"], e["data"]["channel_id"], e["target_id"], e["target_type"], e["actor_id"])
            for e in await audit_rows(rt, guild_id, "limits.bypass")]


# --- messages.send ------------------------------------------------------------------------------------------

async def test_burst_of_ten_then_429_then_one_per_second(client, accounts, rt, clock, capture_events):
    h = await hall(client, accounts, rt)
    remaining = []
    for i in range(10):
        r = await send(client, h.a, h.general, f"m{i}")
        assert r.status_code == 201, r.text
        assert r.headers["X-RateLimit-Bucket"] == "messages.send"
        assert r.headers["X-RateLimit-Limit"] == "10"
        remaining.append(int(r.headers["X-RateLimit-Remaining"]))
    assert remaining == list(range(9, -1, -1))
    count = await message_count(rt, h.general)
    await capture_events.reset()
    r = await send(client, h.a, h.general, "one too many")
    retry_after = limited(r, "messages.send")
    assert 0 < retry_after <= 1
    assert r.headers["Retry-After"] == "1"
    assert await message_count(rt, h.general) == count
    assert await events(capture_events, "MESSAGE_CREATE") == []
    clock.advance(1)
    assert (await send(client, h.a, h.general, "after a second")).status_code == 201
    limited(await send(client, h.a, h.general, "again too soon"), "messages.send")
    clock.advance(5)
    for _ in range(5):
        assert (await send(client, h.a, h.general)).status_code == 201
    limited(await send(client, h.a, h.general), "messages.send")


async def test_send_bucket_is_per_user_and_room(client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="other")
    for _ in range(10):
        await post(client, h.a, h.general)
    limited(await send(client, h.a, h.general), "messages.send")
    await post(client, h.a, other["id"], "another room is another bucket")
    await post(client, h.b, h.general, "another user is another bucket")


async def test_send_bucket_cannot_be_dodged_by_spelling_the_room_id_differently(client, accounts, rt):
    h = await hall(client, accounts, rt)
    for _ in range(10):
        await post(client, h.a, h.general)
    assert len(h.general) < 19
    limited(await send(client, h.a, "0" + h.general), "messages.send")


async def test_refused_sends_still_take_tokens(client, accounts, rt):
    """The bucket counts requests, valid or not (docs/reference/limits.md: the limit is checked before validation)."""
    h = await hall(client, accounts, rt)
    for _ in range(10):
        r = await send(client, h.a, h.general, "")
        assert r.status_code == 422
    limited(await send(client, h.a, h.general, "valid"), "messages.send")


# --- slowmode -----------------------------------------------------------------------------------------------

async def test_slowmode_one_message_per_period_for_members(client, accounts, rt, clock, capture_events):
    h = await hall(client, accounts, rt)
    await set_slowmode(client, h.owner, h.general, 30)
    await post(client, h.a, h.general, "first")
    count = await message_count(rt, h.general)
    await capture_events.reset()
    clock.advance(10)
    r = await send(client, h.a, h.general, "second")
    retry_after = limited(r, "channel.slowmode")
    assert 19.9 < retry_after <= 20
    assert r.headers["Retry-After"] == "20"
    assert await message_count(rt, h.general) == count
    assert await events(capture_events, "MESSAGE_CREATE") == []
    # Others, and other rooms, are not affected.
    await post(client, h.b, h.general, "bob may")
    other = await room(client, h.owner, h.id, name="other")
    await post(client, h.a, other["id"], "elsewhere")
    clock.advance(20)
    await post(client, h.a, h.general, "after the period")
    assert await audit_rows(rt, h.id, "limits.bypass") == []


async def test_slowmode_retry_after_is_the_whole_period_right_after_sending(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await set_slowmode(client, h.owner, h.general, 30)
    await post(client, h.a, h.general, "first")
    retry_after = limited(await send(client, h.a, h.general, "second"), "channel.slowmode")
    assert 29.9 < retry_after <= 30
    clock.advance(29)
    limited(await send(client, h.a, h.general, "still too soon"), "channel.slowmode")
    clock.advance(1)
    await post(client, h.a, h.general, "now")


async def test_slowmode_exemptions(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await set_slowmode(client, h.owner, h.general, 60)
    for i in range(3):
        await post(client, h.owner, h.general, f"owner {i}")  # the owner holds BYPASS_SLOWMODE
    await insert_role(rt, clock, h.id, 8101, P.BYPASS_SLOWMODE, 1, holders=[h.b])
    for i in range(3):
        await post(client, h.b, h.general, f"bob {i}")
    await post(client, h.a, h.general, "alice once")
    limited(await send(client, h.a, h.general, "alice twice"), "channel.slowmode")
    assert await audit_rows(rt, h.id, "limits.bypass") == []


async def test_slowmode_off_again(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await set_slowmode(client, h.owner, h.general, 30)
    await post(client, h.a, h.general)
    limited(await send(client, h.a, h.general), "channel.slowmode")
    await set_slowmode(client, h.owner, h.general, 0)
    await post(client, h.a, h.general)
    await post(client, h.a, h.general)


async def test_slowmode_refusal_after_validation_and_permission(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await set_slowmode(client, h.owner, h.general, 30)
    r = await send(client, h.a, h.general, "   ")
    assert r.status_code == 422
    await post(client, h.a, h.general, "an invalid message does not start the period")


# --- instance administrator ---------------------------------------------------------------------------------

async def test_admin_member_passes_the_send_bucket_with_an_audit_per_bypass(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await make_admin(rt, h.a)
    for i in range(10):
        await post(client, h.a, h.general, f"m{i}")
    assert await bypasses(rt, h.id) == []  # not limited yet: nothing to audit
    await post(client, h.a, h.general, "eleventh")
    await post(client, h.a, h.general, "twelfth")
    expected = ("messages.send", h.general, int(h.general), "channel", int(h.a.id))
    assert await bypasses(rt, h.id) == [expected, expected]


async def test_admin_passes_slowmode_with_audit_only_when_it_applied(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await make_admin(rt, h.a)
    await set_slowmode(client, h.owner, h.general, 30)
    await post(client, h.a, h.general, "first")
    assert await bypasses(rt, h.id) == []
    await post(client, h.a, h.general, "second")
    assert await bypasses(rt, h.id) == [("channel.slowmode", h.general, int(h.general), "channel", int(h.a.id))]
    clock.advance(31)
    await post(client, h.a, h.general, "after the period")
    assert len(await bypasses(rt, h.id)) == 1


async def test_admin_who_is_not_a_member_sends_and_bypasses(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await make_admin(rt, h.outsider)
    await set_slowmode(client, h.owner, h.general, 30)
    m = await post(client, h.outsider, h.general, "instance notice")
    assert m["author"]["id"] == h.outsider.id
    await post(client, h.outsider, h.general, "again")
    assert [b[0] for b in await bypasses(rt, h.id)] == ["channel.slowmode"]
    for _ in range(8):
        await post(client, h.outsider, h.general)
    assert [b[0] for b in await bypasses(rt, h.id)].count("channel.slowmode") == 9
    await post(client, h.outsider, h.general, "eleventh")
    limits = [b[0] for b in await bypasses(rt, h.id)]
    assert limits.count("messages.send") == 1 and limits.count("channel.slowmode") == 10


async def test_admin_with_bypass_slowmode_role_is_not_audited(client, accounts, rt, clock):
    """An administrator who holds BYPASS_SLOWMODE anyway was never limited by slowmode: no audit entry."""
    h = await hall(client, accounts, rt)
    await make_admin(rt, h.a)
    await insert_role(rt, clock, h.id, 8102, P.BYPASS_SLOWMODE, 1, holders=[h.a])
    await set_slowmode(client, h.owner, h.general, 30)
    await post(client, h.a, h.general, "first")
    await post(client, h.a, h.general, "second")
    assert await bypasses(rt, h.id) == []


async def test_admin_owner_is_not_audited_for_slowmode(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await make_admin(rt, h.owner)
    await set_slowmode(client, h.owner, h.general, 30)
    await post(client, h.owner, h.general, "first")
    await post(client, h.owner, h.general, "second")
    assert await bypasses(rt, h.id) == []


# --- messages.modify ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"messages.modify": "3/60"}}], indirect=True)
async def test_messages_modify_bucket_counts_edits_and_deletes(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    m1 = await post(client, h.a, h.general, "one")
    m2 = await post(client, h.a, h.general, "two")
    r = await client.patch(url(h.general, f"/{m1['id']}"), json={"content": "1"}, headers=h.a.headers)
    assert r.status_code == 200 and r.headers["X-RateLimit-Bucket"] == "messages.modify"
    assert r.headers["X-RateLimit-Limit"] == "3" and r.headers["X-RateLimit-Remaining"] == "2"
    assert (await client.patch(url(h.general, f"/{m1['id']}"), json={"content": "2"},
                               headers=h.a.headers)).status_code == 200
    assert (await client.delete(url(h.general, f"/{m1['id']}"), headers=h.a.headers)).status_code == 204
    r = await client.delete(url(h.general, f"/{m2['id']}"), headers=h.a.headers)
    retry_after = limited(r, "messages.modify")
    assert 19.9 < retry_after <= 20
    r = await client.patch(url(h.general, f"/{m2['id']}"), json={"content": "x"}, headers=h.a.headers)
    limited(r, "messages.modify")
    assert (await client.get(url(h.general, f"/{m2['id']}"), headers=h.a.headers)).json()["message"]["content"] == "two"
    # Per user: another member is not limited; sending is another bucket.
    assert (await client.patch(url(h.general, f"/{m2['id']}"), json={"content": "x"},
                               headers=h.b.headers)).status_code == 403
    await post(client, h.a, h.general, "sending still works")
    clock.advance(20)
    assert (await client.delete(url(h.general, f"/{m2['id']}"), headers=h.a.headers)).status_code == 204


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"messages.send": "2/10"}}], indirect=True)
async def test_send_bucket_follows_rate_limits_configuration(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    await post(client, h.a, h.general)
    await post(client, h.a, h.general)
    retry_after = limited(await send(client, h.a, h.general), "messages.send")
    assert 4.9 < retry_after <= 5
    clock.advance(5)
    await post(client, h.a, h.general)
