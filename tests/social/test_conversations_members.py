"""Recipients, renaming, the icon and leaving (OpenAPI: addRecipient, removeRecipient, updateChannel,
deleteChannel, setConversationIcon, removeConversationIcon; docs/social.md "Direct conversations"): every
transition of the conversation table with its DM_CHANNEL_* receivers, and every refusal."""

from __future__ import annotations

from tests.support.conversations import (
    add_recipient,
    check_conversation,
    conversation_row,
    conversations_of,
    group,
    leave,
    member_ids,
    open_dm,
    participant_ids,
    remove_recipient,
    rename,
    soft_delete,
)
from tests.support.factories import make_admin, message_count
from tests.support.files import attached, fetch, png, stored, upload
from tests.support.http import assert_error
from tests.support.messages import post
from tests.support.personas import hall
from tests.support.social import block


async def people(accounts, n):
    return [await accounts.register(f"person{i}", display_name=f"Person {i}") for i in range(n)]


async def dm_events(capture_events):
    """receiver id -> [(type, payload)] of the DM_CHANNEL_* events since the last clear."""
    await capture_events.settle()
    out: dict[int, list] = {}
    for ev in capture_events:
        if str(ev.type).startswith("DM_CHANNEL_"):
            for user in ev.users:
                out.setdefault(user, []).append((str(ev.type), ev.data))
    return out


def uid(account):
    return int(account.id)


# ---- adding ---------------------------------------------------------------------------------------------------

async def test_adding_to_a_one_to_one_makes_a_group(api, accounts, rt, capture_events):
    a, b, c = await people(accounts, 3)
    conv = await open_dm(api, a, b)
    await capture_events.reset()
    grown = await add_recipient(api, b, conv, c)
    check_conversation(grown, b)
    assert grown["id"] == conv["id"] and grown["is_group"] and grown["owner_id"] == b.id
    assert grown["name"] == "Person 0, Person 1, Person 2" and member_ids(grown) == {a.id, b.id, c.id}
    assert (await conversation_row(rt, conv))["dm_pair"] is None
    seen = await dm_events(capture_events)
    assert set(seen) == {uid(a), uid(b), uid(c)}
    assert [t for t, _ in seen[uid(a)]] == ["DM_CHANNEL_UPDATE"] and [t for t, _ in seen[uid(b)]] == ["DM_CHANNEL_UPDATE"]
    assert [t for t, _ in seen[uid(c)]] == ["DM_CHANNEL_CREATE"]
    for user, [(_, payload)] in seen.items():
        check_conversation(payload)
        assert payload["is_group"] and payload["member_count"] == 3


async def test_adding_to_a_group_and_again(api, accounts, capture_events):
    a, b, c, d = await people(accounts, 4)
    conv = await group(api, a, b, c, name="Crew")
    await capture_events.reset()
    grown = await add_recipient(api, c, conv, d)  # any participant adds
    assert grown["name"] == "Crew" and grown["owner_id"] == a.id and grown["member_count"] == 4
    seen = await dm_events(capture_events)
    assert {u: [t for t, _ in evs] for u, evs in seen.items()} == {
        uid(a): ["DM_CHANNEL_UPDATE"], uid(b): ["DM_CHANNEL_UPDATE"], uid(c): ["DM_CHANNEL_UPDATE"],
        uid(d): ["DM_CHANNEL_CREATE"]}
    await capture_events.reset()
    assert (await add_recipient(api, a, conv, d))["member_count"] == 4  # already there: nothing changes
    assert await dm_events(capture_events) == {}


async def test_adding_refusals(api, accounts, rt):
    people_ = await people(accounts, 12)
    a, b, c, d, *rest = people_
    conv = await group(api, a, b, c)
    outsider = rest[-1]
    assert_error(await api.request("PUT", f"/channels/{conv['id']}/recipients/{d.id}", outsider, expect=404),
                 404, "channel.not_found")
    await make_admin(rt, outsider)
    assert_error(await api.request("PUT", f"/channels/{conv['id']}/recipients/{d.id}", outsider, expect=404),
                 404, "channel.not_found")
    for bad in ("123456789", "nope"):
        assert_error(await api.request("PUT", f"/channels/{conv['id']}/recipients/{bad}", a, expect=404),
                     404, "user.not_found")
    await soft_delete(rt, rest[0])
    assert_error(await api.request("PUT", f"/channels/{conv['id']}/recipients/{rest[0].id}", a, expect=404),
                 404, "user.not_found")
    await block(api, d, b)  # only adder <-> added counts
    assert_error(await api.request("PUT", f"/channels/{conv['id']}/recipients/{d.id}", b, expect=403),
                 403, "relationship.blocked")
    await add_recipient(api, a, conv, d)
    for extra in rest[1:7]:
        await add_recipient(api, a, conv, extra)
    assert len(await participant_ids(rt, conv)) == 10
    assert_error(await api.request("PUT", f"/channels/{conv['id']}/recipients/{rest[7].id}", a, expect=409),
                 409, "dm.full")


async def test_recipient_routes_on_a_guild_room(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    for method in ("PUT", "DELETE"):
        path = f"/channels/{h.general}/recipients/{h.b.id}"
        assert_error(await api.request(method, path, h.a, expect=422), 422, "channel.wrong_type")
        # A room the caller cannot see stays unseen.
        assert_error(await api.request(method, path, h.outsider, expect=404), 404, "channel.not_found")


async def test_room_only_operations_on_a_conversation(api, client, accounts):
    a, b, outsider = await people(accounts, 3)
    conv = await open_dm(api, a, b)
    path = f"/channels/{conv['id']}/permissions/{b.id}"
    r = await api.request("PUT", path, a, json={"type": "member", "allow": "SEND_MESSAGES"}, expect=422)
    assert_error(r, 422, "channel.wrong_type")
    assert_error(await api.request("DELETE", path, a, expect=422), 422, "channel.wrong_type")
    assert_error(await upload(client, a, f"/channels/{conv['id']}/background", png()), 422, "channel.wrong_type")
    assert_error(await api.request("DELETE", f"/channels/{conv['id']}/background", a, expect=422),
                 422, "channel.wrong_type")
    # Unseen for an outsider.
    assert_error(await api.request("DELETE", path, outsider, expect=404), 404, "channel.not_found")
    assert_error(await upload(client, outsider, f"/channels/{conv['id']}/background", png()), 404,
                 "channel.not_found")


# ---- removing and leaving -------------------------------------------------------------------------------------

async def test_owner_removes_from_a_group_of_four(api, accounts, rt, capture_events):
    a, b, c, d = await people(accounts, 4)
    conv = await group(api, a, b, c, d)
    await capture_events.reset()
    await remove_recipient(api, a, conv, c)
    assert await participant_ids(rt, conv) == {a.id, b.id, d.id}
    seen = await dm_events(capture_events)
    assert seen[uid(c)] == [("DM_CHANNEL_DELETE", {"id": conv["id"]})]
    for who in (a, b, d):
        [(type_, payload)] = seen[uid(who)]
        assert type_ == "DM_CHANNEL_UPDATE" and payload["member_count"] == 3 and payload["is_group"]
    assert_error(await api.request("GET", f"/channels/{conv['id']}", c, expect=404), 404, "channel.not_found")
    assert await conversations_of(api, c) == []


async def test_removal_refusals(api, accounts):
    a, b, c, d, e = await people(accounts, 5)
    conv = await group(api, a, b, c, d)
    assert_error(await api.request("DELETE", f"/channels/{conv['id']}/recipients/{c.id}", b, expect=403),
                 403, "perm.denied")
    for who in (e.id, "123", "nope"):
        assert_error(await api.request("DELETE", f"/channels/{conv['id']}/recipients/{who}", a, expect=404),
                     404, "recipient.not_found")
    assert_error(await api.request("DELETE", f"/channels/{conv['id']}/recipients/{b.id}", e, expect=404),
                 404, "channel.not_found")
    dm = await open_dm(api, a, e)
    assert_error(await api.request("DELETE", f"/channels/{dm['id']}/recipients/{e.id}", a, expect=422),
                 422, "dm.not_group")


async def test_owner_leaving_passes_ownership_to_the_earliest_joined(api, accounts, capture_events):
    a, b, c, d, e = await people(accounts, 5)
    conv = await group(api, a, b, c)
    await add_recipient(api, c, conv, e)
    await add_recipient(api, c, conv, d)  # joined after b and c, before nobody
    await capture_events.reset()
    await leave(api, a, conv)
    seen = await dm_events(capture_events)
    assert seen[uid(a)] == [("DM_CHANNEL_DELETE", {"id": conv["id"]})]
    [(_, view)] = seen[uid(d)]
    # b and c joined with the group (same time; ties go by id), e and d later.
    first = min((b, c), key=lambda x: int(x.id))
    assert view["owner_id"] == first.id and view["member_count"] == 4
    assert (await api.get(f"/channels/{conv['id']}", e))["channel"]["owner_id"] == first.id


async def test_group_of_three_losing_one_becomes_a_one_to_one(api, client, accounts, rt, capture_events, settings):
    a, b, c = await people(accounts, 3)
    conv = await group(api, a, b, c, name="Trio")
    r = await upload(client, a, f"/channels/{conv['id']}/icon", png())
    assert r.status_code == 200, r.text
    icon = r.json()["channel"]["icon_file_id"]
    assert stored(settings, icon).exists()
    await capture_events.reset()
    await leave(api, c, conv)
    row = await conversation_row(rt, conv)
    low, high = sorted((int(a.id), int(b.id)))
    assert not row["is_group"] and row["name"] is None and row["dm_owner_id"] is None and row["icon_file_id"] is None
    assert row["dm_pair"] == f"{low}:{high}"
    assert (await fetch(client, a, icon)).status_code == 404 and not stored(settings, icon).exists()
    seen = await dm_events(capture_events)
    assert seen[uid(c)] == [("DM_CHANNEL_DELETE", {"id": conv["id"]})]
    for who, other in ((a, b), (b, a)):
        [(type_, view)] = seen[uid(who)]
        check_conversation(view, who)
        assert type_ == "DM_CHANNEL_UPDATE" and not view["is_group"] and view["counterpart"]["id"] == other.id
    # A one-to-one again: removing the other is refused, renaming too.
    assert_error(await api.request("DELETE", f"/channels/{conv['id']}/recipients/{b.id}", a, expect=422),
                 422, "dm.not_group")


async def test_leaving_a_conversation_of_two_deletes_it_with_messages_and_files(api, client, accounts, rt,
                                                                                capture_events, settings):
    a, b = await people(accounts, 2)
    conv = await open_dm(api, a, b)
    f = await attached(client, a, conv["id"])
    m = await post(client, a, conv["id"], "with a file", attachment_ids=[f["id"]])
    assert (await fetch(client, b, f["id"])).status_code == 200 and stored(settings, f["id"]).exists()
    await capture_events.reset()
    await leave(api, b, conv)
    seen = await dm_events(capture_events)
    assert seen == {uid(a): [("DM_CHANNEL_DELETE", {"id": conv["id"]})],
                    uid(b): [("DM_CHANNEL_DELETE", {"id": conv["id"]})]}
    assert await conversation_row(rt, conv) is None and await message_count(rt, conv["id"]) == 0
    assert (await fetch(client, a, f["id"])).status_code == 404 and not stored(settings, f["id"]).exists()
    assert_error(await api.request("GET", f"/channels/{conv['id']}/messages/{m['id']}", a, expect=404),
                 404, "channel.not_found")
    # Opening again makes a new conversation.
    assert (await open_dm(api, a, b, expect=201))["id"] != conv["id"]


async def test_delete_channel_on_a_conversation_is_leaving(api, accounts, rt, capture_events):
    a, b, c, d = await people(accounts, 4)
    trio = await group(api, a, b, c, d)
    await api.delete(f"/channels/{trio['id']}", d)
    assert await participant_ids(rt, trio) == {a.id, b.id, c.id}
    dm = await open_dm(api, a, b)
    await capture_events.reset()
    await api.delete(f"/channels/{dm['id']}", a)
    assert await conversation_row(rt, dm) is None
    assert set(await dm_events(capture_events)) == {uid(a), uid(b)}
    assert_error(await api.request("DELETE", f"/channels/{trio['id']}", d, expect=404), 404, "channel.not_found")


# ---- renaming -------------------------------------------------------------------------------------------------

async def test_rename_by_the_owner_only(api, accounts, rt, capture_events):
    a, b, c, outsider = await people(accounts, 4)
    conv = await group(api, a, b, c)
    await capture_events.reset()
    renamed = await rename(api, a, conv, "  New name ")
    assert renamed["name"] == "New name"
    seen = await dm_events(capture_events)
    assert {u: [t for t, _ in evs] for u, evs in seen.items()} == {
        u: ["DM_CHANNEL_UPDATE"] for u in (uid(a), uid(b), uid(c))}
    r = await api.request("PATCH", f"/channels/{conv['id']}", b, json={"name": "Mine"}, expect=403)
    assert_error(r, 403, "perm.denied")
    r = await api.request("PATCH", f"/channels/{conv['id']}", outsider, json={"name": "Mine"}, expect=404)
    assert_error(r, 404, "channel.not_found")
    for bad in ("", "x" * 101, None):
        await api.request("PATCH", f"/channels/{conv['id']}", a, json={"name": bad}, expect=422)
    dm = await open_dm(api, a, b)
    r = await api.request("PATCH", f"/channels/{dm['id']}", a, json={"name": "Pair"}, expect=422)
    assert_error(r, 422, "dm.not_group")
    assert (await conversation_row(rt, conv))["name"] == "New name"


# ---- the icon -------------------------------------------------------------------------------------------------

async def test_icon_set_replaced_removed_and_served_to_participants_only(api, client, accounts, rt, settings,
                                                                        capture_events):
    a, b, c, outsider = await people(accounts, 4)
    conv = await group(api, a, b, c)
    await capture_events.reset()
    r = await upload(client, a, f"/channels/{conv['id']}/icon", png())
    assert r.status_code == 200, r.text
    first = r.json()["channel"]["icon_file_id"]
    assert first is not None
    seen = await dm_events(capture_events)
    assert all(evs[0][1]["icon_file_id"] == first for evs in seen.values()) and len(seen) == 3
    for who in (a, b, c):
        got = await fetch(client, who, first)
        assert got.status_code == 200 and got.content
    await make_admin(rt, outsider)
    assert (await fetch(client, outsider, first)).status_code == 404
    assert (await client.get(f"/api/v1/files/{first}", headers=outsider.headers)).status_code == 404
    r = await upload(client, a, f"/channels/{conv['id']}/icon", png(color=(0, 0, 255)))
    second = r.json()["channel"]["icon_file_id"]
    assert second != first and not stored(settings, first).exists()
    assert (await fetch(client, b, first)).status_code == 404
    removed = (await api.delete(f"/channels/{conv['id']}/icon", a, expect=200))["channel"]
    assert removed["icon_file_id"] is None and not stored(settings, second).exists()


async def test_icon_refusals(api, client, accounts, rt):
    a, b, c, outsider = await people(accounts, 4)
    conv = await group(api, a, b, c)
    r = await upload(client, b, f"/channels/{conv['id']}/icon", png())
    assert_error(r, 403, "perm.denied")
    assert_error(await api.request("DELETE", f"/channels/{conv['id']}/icon", b, expect=403), 403, "perm.denied")
    assert_error(await upload(client, outsider, f"/channels/{conv['id']}/icon", png()), 404, "channel.not_found")
    dm = await open_dm(api, a, b)
    assert_error(await upload(client, a, f"/channels/{dm['id']}/icon", png()), 422, "dm.not_group")
    assert_error(await api.request("DELETE", f"/channels/{dm['id']}/icon", a, expect=422), 422, "dm.not_group")
    r = await upload(client, a, f"/channels/{conv['id']}/icon", b"not an image", "x.png", "image/png")
    assert r.status_code == 415
    h = await hall(client, accounts, rt)
    assert_error(await upload(client, h.owner, f"/channels/{h.general}/icon", png()), 422, "channel.wrong_type")
    assert_error(await upload(client, h.outsider, f"/channels/{h.general}/icon", png()), 404, "channel.not_found")
