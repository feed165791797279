"""Personal styles (OpenAPI: getMyStyles, setMyStyle, deleteMyStyle; docs/customisation.md): availability
through held roles (the default role included), per-guild and friends scopes, items no longer available
shown as null while the choice is kept, and who hears of a change (members / friends)."""

from __future__ import annotations

from tests.support.customisation import upload_cosmetic
from tests.support.factories import make_admin
from tests.support.guilds import give, make_guild, make_role
from tests.support.http import Api, error
from tests.support.personas import hall
from tests.support.social import befriend

STYLE_FIELDS = {"scope", "guild_id", "frame_id", "icon_id", "color", "updated_at"}


async def styled_hall(client, accounts, rt):
    """A hall with a frame and an icon; role `vip` (held by alice) shows both; bob holds nothing."""
    h = await hall(client, accounts, rt)
    frame = await upload_cosmetic(client, h.owner, h.id, "Frame", "frame")
    icon = await upload_cosmetic(client, h.owner, h.id, "Icon", "icon")
    spare = await upload_cosmetic(client, h.owner, h.id, "Spare", "frame")
    vip = await make_role(client, h.owner, h.id, "vip", frame_id=frame["id"], icon_id=icon["id"])
    await give(client, h.owner, h.id, h.a, vip["id"])
    return h, frame, icon, spare, vip


async def test_available_items_come_from_held_roles(client, accounts, rt):
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    mine = await api.get("/users/@me/styles", h.a)
    assert mine["styles"] == []
    assert mine["available"]["guilds"] == {h.id: [frame, icon]}
    assert mine["available"]["friends"] == [frame, icon]
    assert (await api.get("/users/@me/styles", h.b))["available"] == {"friends": [], "guilds": {h.id: []}}
    # The default role is held by every member.
    await api.patch(f"/guilds/{h.id}/roles/{h.id}", h.owner, json={"frame_id": spare["id"]})
    assert (await api.get("/users/@me/styles", h.b))["available"]["guilds"] == {h.id: [spare]}


async def test_guild_scope_reaches_the_members_with_the_member_style(client, accounts, rt, capture_events):
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    await capture_events.reset()
    api = Api(client)
    style = (await api.put("/users/@me/styles", h.a, expect=200, json={
        "scope": "guild", "guild_id": h.id, "frame_id": frame["id"], "icon_id": icon["id"], "color": 0xFF8800}))["style"]
    assert set(style) == STYLE_FIELDS
    assert (style["scope"], style["guild_id"], style["frame_id"], style["icon_id"], style["color"]) == (
        "guild", h.id, frame["id"], icon["id"], 0xFF8800)
    await capture_events.settle()
    [ev] = capture_events.of_type("MEMBER_UPDATE")
    assert ev.data["user"]["id"] == h.a.id and ev.data["style"] == style
    assert set(ev.users) == {int(x.id) for x in (h.owner, h.a, h.b)}
    assert capture_events.of_type("PRESENCE_UPDATE") == []
    member = (await api.get(f"/guilds/{h.id}/members/{h.a.id}", h.b))["member"]
    assert member["style"] == style
    assert (await api.get("/users/@me/styles", h.a))["styles"] == [style]


async def test_items_must_be_available_in_the_scope(client, accounts, rt):
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    for body, field in (({"frame_id": spare["id"]}, "frame_id"), ({"frame_id": icon["id"]}, "frame_id"),
                        ({"icon_id": frame["id"]}, "icon_id"), ({"icon_id": "123"}, "icon_id")):
        r = await api.request("PUT", "/users/@me/styles", h.a, json={"scope": "guild", "guild_id": h.id, **body},
                              expect=None)
        assert error(r) == (422, "validation.failed") and r.json()["error"]["details"][0]["field"] == field
    r = await api.request("PUT", "/users/@me/styles", h.b, json={"scope": "guild", "guild_id": h.id,
                                                                 "frame_id": frame["id"]}, expect=None)
    assert error(r) == (422, "validation.failed")
    r = await api.request("PUT", "/users/@me/styles", h.outsider, json={"scope": "guild", "guild_id": h.id},
                          expect=None)
    assert error(r) == (404, "guild.not_found")
    r = await api.request("PUT", "/users/@me/styles", h.a, json={"scope": "guild"}, expect=None)
    assert error(r) == (422, "validation.failed")
    r = await api.request("PUT", "/users/@me/styles", h.a, json={"scope": "friends", "guild_id": h.id}, expect=None)
    assert error(r) == (422, "validation.failed")
    # An instance administrator sees the guild but is no member: no style there.
    admin = await accounts.register("admin")
    await make_admin(rt, admin)
    r = await api.request("PUT", "/users/@me/styles", admin, json={"scope": "guild", "guild_id": h.id}, expect=None)
    assert error(r) == (404, "guild.not_found")
    # Color alone needs no item.
    await api.put("/users/@me/styles", h.b, expect=200, json={"scope": "guild", "guild_id": h.id, "color": 5})


async def test_friends_scope_reaches_friends_only(client, accounts, rt, capture_events):
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    await befriend(api, h.a, h.outsider)
    await capture_events.reset()
    style = (await api.put("/users/@me/styles", h.a, expect=200,
                           json={"scope": "friends", "frame_id": frame["id"]}))["style"]
    assert (style["scope"], style["guild_id"], style["frame_id"], style["icon_id"]) == ("friends", None, frame["id"], None)
    await capture_events.settle()
    [ev] = capture_events.of_type("PRESENCE_UPDATE")
    assert ev.users == (int(h.outsider.id),)
    assert ev.data["user"]["id"] == h.a.id and ev.data["style"] == style
    assert capture_events.of_type("MEMBER_UPDATE") == []
    # An item of another guild of the user is available to friends too.
    other = await make_guild(client, h.a, "Own place")
    badge = await upload_cosmetic(client, h.a, other["id"], "Badge", "icon")
    own = await make_role(client, h.a, other["id"], "me", icon_id=badge["id"])
    await give(client, h.a, other["id"], h.a, own["id"])
    both = (await api.put("/users/@me/styles", h.a, expect=200,
                          json={"scope": "friends", "frame_id": frame["id"], "icon_id": badge["id"]}))["style"]
    assert (both["frame_id"], both["icon_id"]) == (frame["id"], badge["id"])


async def test_a_friends_list_shows_each_friends_own_friends_scope_style(client, accounts, rt):
    """The friends' styles of a list are read together, whatever their number: each friend shows their own
    friends-scope style, a friend without one shows none, and a guild-scope style is not shown there."""
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    for friend in (h.a, h.b, h.owner):
        await befriend(api, h.outsider, friend)
    mine = (await api.put("/users/@me/styles", h.a, expect=200, json={"scope": "friends", "frame_id": frame["id"]}))
    owners = (await api.put("/users/@me/styles", h.owner, expect=200, json={"scope": "friends", "color": 0x112233}))
    await api.put("/users/@me/styles", h.b, expect=200, json={"scope": "guild", "guild_id": h.id, "color": 1})
    friends = (await api.get("/users/@me/relationships", h.outsider))["friends"]
    shown = {f["user"]["id"]: f["style"] for f in friends}
    assert shown == {h.a.id: mine["style"], h.owner.id: owners["style"], h.b.id: None}


async def test_items_no_longer_available_show_as_null(client, accounts, rt):
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    await api.put("/users/@me/styles", h.a, expect=200, json={"scope": "guild", "guild_id": h.id,
                                                             "frame_id": frame["id"], "icon_id": icon["id"]})
    await api.delete(f"/guilds/{h.id}/members/{h.a.id}/roles/{vip['id']}", h.owner)
    [style] = (await api.get("/users/@me/styles", h.a))["styles"]
    assert (style["frame_id"], style["icon_id"]) == (None, None)
    assert (await api.get(f"/guilds/{h.id}/members/{h.a.id}", h.b))["member"]["style"]["frame_id"] is None
    await give(client, h.owner, h.id, h.a, vip["id"])  # the stored choice was kept
    [style] = (await api.get("/users/@me/styles", h.a))["styles"]
    assert (style["frame_id"], style["icon_id"]) == (frame["id"], icon["id"])
    await api.delete(f"/guilds/{h.id}/cosmetics/{icon['id']}", h.owner)
    [style] = (await api.get("/users/@me/styles", h.a))["styles"]
    assert (style["frame_id"], style["icon_id"]) == (frame["id"], None)


async def test_delete_clears_one_scope_and_is_idempotent(client, accounts, rt, capture_events):
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    await api.put("/users/@me/styles", h.a, expect=200, json={"scope": "guild", "guild_id": h.id, "color": 1})
    await api.put("/users/@me/styles", h.a, expect=200, json={"scope": "friends", "color": 2})
    await capture_events.reset()
    await api.delete("/users/@me/styles", h.a, params={"scope": "guild", "guild_id": h.id})
    await capture_events.settle()
    [ev] = capture_events.of_type("MEMBER_UPDATE")
    assert ev.data["user"]["id"] == h.a.id and ev.data["style"] is None
    assert [s["scope"] for s in (await api.get("/users/@me/styles", h.a))["styles"]] == ["friends"]
    await capture_events.reset()
    await api.delete("/users/@me/styles", h.a, params={"scope": "guild", "guild_id": h.id})
    await capture_events.settle()
    assert capture_events.of_type("MEMBER_UPDATE") == []
    await api.delete("/users/@me/styles", h.a, params={"scope": "friends"})
    assert (await api.get("/users/@me/styles", h.a))["styles"] == []
    r = await api.request("DELETE", "/users/@me/styles", h.a, params={"scope": "everywhere"}, expect=None)
    assert error(r) == (422, "validation.failed")


async def test_every_presence_update_carries_the_friends_style(client, accounts, rt, capture_events):
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    await befriend(api, h.a, h.outsider)
    style = (await api.put("/users/@me/styles", h.a, expect=200, json={"scope": "friends", "icon_id": icon["id"]}))
    await capture_events.reset()
    await api.patch("/users/@me", h.a, json={"custom_status": "brewing"})
    await capture_events.settle()
    [ev] = capture_events.of_type("PRESENCE_UPDATE")
    assert ev.users == (int(h.outsider.id),)
    assert ev.data["user"]["custom_status"] == "brewing" and ev.data["style"] == style["style"]
    # A friend without a style is announced with null.
    await capture_events.reset()
    await api.patch("/users/@me", h.outsider, json={"custom_status": "away"})
    await capture_events.settle()
    [ev] = capture_events.of_type("PRESENCE_UPDATE")
    assert ev.users == (int(h.a.id),) and ev.data["style"] is None


async def test_changes_of_role_cosmetics_and_the_gallery_refresh_styled_members(client, accounts, rt,
                                                                              capture_events):
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    await give(client, h.owner, h.id, h.b, vip["id"])
    await api.put("/users/@me/styles", h.a, expect=200, json={"scope": "guild", "guild_id": h.id,
                                                             "frame_id": frame["id"], "icon_id": icon["id"]})
    await capture_events.reset()
    # The role shows another frame: alice (styled holder) is announced with her frame gone; bob (no style) is not.
    await api.patch(f"/guilds/{h.id}/roles/{vip['id']}", h.owner, json={"frame_id": spare["id"]})
    await capture_events.settle()
    [ev] = capture_events.of_type("MEMBER_UPDATE")
    assert ev.data["user"]["id"] == h.a.id
    assert (ev.data["style"]["frame_id"], ev.data["style"]["icon_id"]) == (None, icon["id"])
    # A permission change alone announces nobody's style.
    await capture_events.reset()
    await api.patch(f"/guilds/{h.id}/roles/{vip['id']}", h.owner, json={"color": 3})
    await capture_events.settle()
    assert capture_events.of_type("MEMBER_UPDATE") == []
    # Deleting the icon she chose announces her with null in its place.
    await api.delete(f"/guilds/{h.id}/cosmetics/{icon['id']}", h.owner)
    await capture_events.settle()
    [ev] = capture_events.of_type("MEMBER_UPDATE")
    assert ev.data["user"]["id"] == h.a.id and ev.data["style"]["icon_id"] is None


async def test_friends_see_the_style_in_relationships_and_ready(client, accounts, rt):
    """The friends-scope style travels with the friendship: GET /users/@me/relationships and READY (its
    relationships and presences) carry it for friends, never for a pending request or a block."""
    from meadhall.gateway.auth import GatewayIdentity
    from meadhall.gateway.ready import ready_payload

    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    await befriend(api, h.a, h.outsider)
    style = (await api.put("/users/@me/styles", h.a, expect=200,
                           json={"scope": "friends", "frame_id": frame["id"]}))["style"]
    lists = await api.get("/users/@me/relationships", h.outsider)
    [friend] = lists["friends"]
    assert friend["id"] == h.a.id and friend["style"] == style
    ready = await ready_payload(rt, GatewayIdentity(int(h.outsider.id), 0, False), "gs")
    assert ready is not None and ready["relationships"] == lists
    assert [p["style"] for p in ready["presences"] if p["user"]["id"] == h.a.id] == [style]
    # The other way round: alice sees the outsider, who set no style, with none.
    mine = await api.get("/users/@me/relationships", h.a)
    assert [f["style"] for f in mine["friends"]] == [None]
    # A pending request shows no style, even of someone who set one.
    await api.delete(f"/users/@me/relationships/{h.a.id}", h.outsider, expect=204)
    await api.post("/users/@me/relationships", h.a, expect=201, json={"username": h.outsider["user"]["username"]})
    [incoming] = (await api.get("/users/@me/relationships", h.outsider))["incoming"]
    assert incoming["style"] is None
    # Accepting makes friends again: the acceptor's answer carries the new friend's style.
    accepted = (await api.put(f"/users/@me/relationships/{h.a.id}", h.outsider, expect=200,
                              json={"type": "friend"}))["relationship"]
    assert accepted["type"] == "friend" and accepted["style"] == style


async def style_count_of(rt, account) -> int:
    from sqlalchemy import select

    from meadhall.db.schema import users

    async with rt.read() as uow:
        return (await uow.conn.execute(select(users.c.style_count).where(users.c.id == int(account.id)))).scalar_one()


async def test_the_style_count_follows_every_style_and_a_profile_change_still_carries_them(
        client, accounts, rt, capture_events):
    """`users.style_count` (kept by triggers) lets a profile change of a user without styles skip both style
    lookups; with styles, its MEMBER_UPDATE in each guild and its PRESENCE_UPDATE carry them."""
    h, frame, icon, spare, vip = await styled_hall(client, accounts, rt)
    api = Api(client)
    other = await make_guild(client, h.a, "Second hall")
    await befriend(api, h.a, h.outsider)
    assert await style_count_of(rt, h.a) == 0

    friends_style = (await api.put("/users/@me/styles", h.a, expect=200,
                                   json={"scope": "friends", "icon_id": icon["id"]}))["style"]
    hall_style = (await api.put("/users/@me/styles", h.a, expect=200,
                                json={"scope": "guild", "guild_id": h.id, "frame_id": frame["id"]}))["style"]
    await api.put("/users/@me/styles", h.a, expect=200, json={"scope": "guild", "guild_id": other["id"], "color": 7})
    assert await style_count_of(rt, h.a) == 3
    hall_style = (await api.put("/users/@me/styles", h.a, expect=200,  # a change, not one more
                                json={"scope": "guild", "guild_id": h.id, "frame_id": frame["id"], "color": 5}))["style"]
    assert await style_count_of(rt, h.a) == 3

    await capture_events.reset()
    await api.patch("/users/@me", h.a, json={"custom_status": "brewing"})
    await capture_events.settle()
    by_guild = {ev.data["guild_id"]: ev.data["style"] for ev in capture_events.of_type("MEMBER_UPDATE")}
    assert by_guild[h.id] == hall_style
    assert by_guild[other["id"]]["color"] == 7
    [presence] = capture_events.of_type("PRESENCE_UPDATE")
    assert presence.data["style"] == friends_style

    await api.delete(f"/guilds/{other['id']}", h.a, expect=204)  # its style goes by cascade
    assert await style_count_of(rt, h.a) == 2
    await api.delete("/users/@me/styles", h.a, params={"scope": "guild", "guild_id": h.id})
    await api.delete("/users/@me/styles", h.a, params={"scope": "friends"})
    assert await style_count_of(rt, h.a) == 0

    await capture_events.reset()
    await api.patch("/users/@me", h.a, json={"custom_status": "resting"})
    await capture_events.settle()
    assert [ev.data["style"] for ev in capture_events.of_type("MEMBER_UPDATE")] == [None]
    assert capture_events.of_type("PRESENCE_UPDATE")[0].data["style"] is None
