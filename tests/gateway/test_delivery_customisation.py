"""Customisation events over a real WebSocket (docs/reference/events.md, docs/customisation.md):
GUILD_EMOJIS_UPDATE, GUILD_SOUNDS_UPDATE and GUILD_COSMETICS_UPDATE reach the guild's members and nobody
else (instance administrators outside it included); a guild-scope style reaches the members as
MEMBER_UPDATE, a friends-scope style the friends as PRESENCE_UPDATE; READY and GUILD_CREATE snapshots
carry the guild's emojis, sounds and cosmetics."""

from __future__ import annotations

from tests.support.customisation import upload_cosmetic, upload_emoji, upload_sound
from tests.support.delivery import online, refused, seen, types
from tests.support.factories import make_admin
from tests.support.guilds import accept_invite, give, make_guild, make_invite, make_role
from tests.support.http import Api
from tests.support.personas import hall
from tests.support.social import befriend

COLLECTION_EVENTS = ("GUILD_EMOJIS_UPDATE", "GUILD_SOUNDS_UPDATE", "GUILD_COSMETICS_UPDATE")


async def test_collection_updates_reach_exactly_the_members(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    admin = await accounts.register("admin")
    await make_admin(rt, admin)
    owner, a, b, out, adm = await online(gateway, client, h.owner, h.a, h.b, h.outsider, admin)
    emoji = await upload_emoji(client, h.owner, h.id, "wave")
    sound = await upload_sound(client, h.owner, h.id, "Gong")
    cosmetic = await upload_cosmetic(client, h.owner, h.id, "Frame")
    await Api(client).delete(f"/guilds/{h.id}/emojis/{emoji['id']}", h.owner)
    for account, conn in ((h.owner, owner), (h.a, a), (h.b, b)):
        [got] = await seen(client, account, conn)
        assert types(got) == ["GUILD_EMOJIS_UPDATE", "GUILD_SOUNDS_UPDATE", "GUILD_COSMETICS_UPDATE",
                              "GUILD_EMOJIS_UPDATE"]
        assert got[0][1] == {"guild_id": h.id, "emojis": [emoji]}
        assert got[1][1] == {"guild_id": h.id, "sounds": [sound]}
        assert got[2][1] == {"guild_id": h.id, "cosmetics": [cosmetic]}
        assert got[3][1] == {"guild_id": h.id, "emojis": []}
    await refused(client, h.outsider, out)
    await refused(client, admin, adm, only=COLLECTION_EVENTS)


async def test_style_events_reach_members_or_friends(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    api = Api(client)
    frame = await upload_cosmetic(client, h.owner, h.id, "Frame")
    vip = await make_role(client, h.owner, h.id, "vip", frame_id=frame["id"])
    await give(client, h.owner, h.id, h.a, vip["id"])
    await befriend(api, h.a, h.outsider)
    owner, a, b, out = await online(gateway, client, h.owner, h.a, h.b, h.outsider)
    style = (await api.put("/users/@me/styles", h.a, expect=200,
                           json={"scope": "guild", "guild_id": h.id, "frame_id": frame["id"]}))["style"]
    for account, conn in ((h.owner, owner), (h.a, a), (h.b, b)):
        [got] = await seen(client, account, conn)
        assert types(got) == ["MEMBER_UPDATE"]
        assert got[0][1]["user"]["id"] == h.a.id and got[0][1]["style"] == style
    await refused(client, h.outsider, out)
    friends = (await api.put("/users/@me/styles", h.a, expect=200,
                             json={"scope": "friends", "frame_id": frame["id"], "color": 7}))["style"]
    [got] = await seen(client, h.outsider, out)
    assert types(got) == ["PRESENCE_UPDATE"]
    assert got[0][1]["user"]["id"] == h.a.id and got[0][1]["style"] == friends
    for account, conn in ((h.owner, owner), (h.b, b)):
        await refused(client, account, conn)


async def test_snapshots_carry_the_collections(gateway, client, accounts, rt):
    h = await hall(client, accounts, rt)
    emoji = await upload_emoji(client, h.owner, h.id, "wave")
    sound = await upload_sound(client, h.owner, h.id, "Gong")
    cosmetic = await upload_cosmetic(client, h.owner, h.id, "Frame")
    conn = await gateway.connect()
    ready = await conn.identify(h.a["token"])
    [snap] = [g for g in ready["guilds"] if g["id"] == h.id]
    assert (snap["emojis"], snap["sounds"], snap["cosmetics"]) == ([emoji], [sound], [cosmetic])
    joiner = await accounts.register("joiner")
    (new,) = await online(gateway, client, joiner)
    invite = await make_invite(client, h.owner, h.general)
    assert (await accept_invite(client, joiner, invite["code"])).status_code == 200
    created = await new.dispatch("GUILD_CREATE")
    assert (created["emojis"], created["sounds"], created["cosmetics"]) == ([emoji], [sound], [cosmetic])


async def test_ready_gives_each_guild_of_the_user_its_own_rooms_and_collections(gateway, client, accounts, rt):
    """READY selects rooms and collections through the user's memberships: each guild gets exactly its own,
    a guild without any gets empty lists, and a guild the user is not in lends nothing."""
    h = await hall(client, accounts, rt)
    wave = await upload_emoji(client, h.owner, h.id, "wave")
    gong = await upload_sound(client, h.owner, h.id, "Gong")
    own = await make_guild(client, h.a, "Own")
    nod = await upload_emoji(client, h.a, own["id"], "nod")
    other = await make_guild(client, h.outsider, "Other")
    await upload_emoji(client, h.outsider, other["id"], "shrug")
    await upload_cosmetic(client, h.outsider, other["id"], "Frame")
    conn = await gateway.connect()
    ready = await conn.identify(h.a["token"])
    snaps = {g["id"]: g for g in ready["guilds"]}
    assert set(snaps) == {h.id, own["id"]}
    assert (snaps[h.id]["emojis"], snaps[h.id]["sounds"], snaps[h.id]["cosmetics"]) == ([wave], [gong], [])
    assert (snaps[own["id"]]["emojis"], snaps[own["id"]]["sounds"], snaps[own["id"]]["cosmetics"]) == ([nod], [], [])
    for guild_id, snap in snaps.items():
        assert snap["channels"] and all(room["guild_id"] == guild_id for room in snap["channels"])
