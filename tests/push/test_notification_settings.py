"""Notification settings (docs/push.md, "Notification levels"; OpenAPI: getNotificationSettings,
setGuildNotificationSettings, setChannelNotificationSettings): the defaults, a PUT replacing the whole setting,
mutes that run out, who may set what (and the refusals), NOTIFICATION_SETTINGS_UPDATE to the user's connections,
READY's copy, and the settings going with the membership, the room or the participation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.admin import admin_account
from tests.support.conversations import group, leave, open_dm
from tests.support.factories import add_member
from tests.support.guilds import override, room
from tests.support.http import assert_error, invalid, not_found
from tests.support.personas import hall

SETTINGS = "/users/@me/notification-settings"
START = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
EMPTY = {"guilds": [], "channels": []}


def guild_url(guild_id: str) -> str:
    return f"{SETTINGS}/guilds/{guild_id}"


def channel_url(channel_id: str) -> str:
    return f"{SETTINGS}/channels/{channel_id}"


def at(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def put(api: Any, who: Any, path: str, expect: int = 200, **body: Any) -> Any:
    return await api.put(path, who, json=body, expect=expect)


async def put_raw(api: Any, who: Any, path: str, body: Any) -> Any:
    return await api.request("PUT", path, who, json=body, expect=None)


# ---- defaults and replacing ---------------------------------------------------------------------------


async def test_a_new_account_has_only_defaults_listed_as_nothing(api, accounts):
    alice = await accounts.register("alice")
    assert await api.get(SETTINGS, alice) == EMPTY
    r = await api.request("GET", SETTINGS, None, expect=None)
    assert_error(r, 401, "auth.unauthorized")


async def test_a_guild_setting_is_answered_listed_and_replaced_whole(api, client, accounts, rt, clock):
    clock.set(START)
    h = await hall(client, accounts, rt)
    until = START + timedelta(hours=8)

    answer = await put(api, h.a, guild_url(h.id), level="all", muted_until=at(until), suppress_everyone=True)

    setting = {"guild_id": h.id, "level": "all", "muted_until": at(until), "suppress_everyone": True}
    assert answer == {"setting": setting}
    assert await api.get(SETTINGS, h.a) == {"guilds": [setting], "channels": []}
    assert await api.get(SETTINGS, h.b) == EMPTY  # per user

    # A PUT replaces the whole setting: what it leaves out takes its default.
    answer = await put(api, h.a, guild_url(h.id), level="nothing")
    assert answer == {"setting": {"guild_id": h.id, "level": "nothing", "muted_until": None,
                                  "suppress_everyone": False}}
    assert (await api.get(SETTINGS, h.a))["guilds"] == [answer["setting"]]

    # Back to the defaults: no longer listed.
    answer = await put(api, h.a, guild_url(h.id), level="mentions", muted_until=None, suppress_everyone=False)
    assert answer["setting"] == {"guild_id": h.id, "level": "mentions", "muted_until": None,
                                 "suppress_everyone": False}
    assert await api.get(SETTINGS, h.a) == EMPTY

    # Only `@everyone` suppressed differs from the default: listed.
    await put(api, h.a, guild_url(h.id), level="mentions", suppress_everyone=True)
    assert (await api.get(SETTINGS, h.a))["guilds"] == [
        {"guild_id": h.id, "level": "mentions", "muted_until": None, "suppress_everyone": True}]


async def test_a_past_mute_is_null_and_a_mute_that_runs_out_stops_being_listed(api, client, accounts, rt, clock):
    clock.set(START)
    h = await hall(client, accounts, rt)

    answer = await put(api, h.a, guild_url(h.id), level="mentions", muted_until=at(START - timedelta(minutes=1)))
    assert answer["setting"]["muted_until"] is None
    assert await api.get(SETTINGS, h.a) == EMPTY

    in_15 = START + timedelta(minutes=15)
    await put(api, h.a, guild_url(h.id), level="mentions", muted_until=at(in_15))
    await put(api, h.a, channel_url(h.general), level="all", muted_until=at(in_15))
    listed = await api.get(SETTINGS, h.a)
    assert [g["muted_until"] for g in listed["guilds"]] == [at(in_15)]
    assert listed["channels"] == [{"channel_id": h.general, "level": "all", "muted_until": at(in_15)}]

    clock.set(in_15)  # the mute has run out
    listed = await api.get(SETTINGS, h.a)
    assert listed == {"guilds": [], "channels": [{"channel_id": h.general, "level": "all", "muted_until": None}]}


async def test_a_room_setting_and_its_default(api, client, accounts, rt, clock):
    clock.set(START)
    h = await hall(client, accounts, rt)
    voice = await room(client, h.owner, h.id, name="Talk", type="voice")
    until = START + timedelta(days=1)

    answer = await put(api, h.a, channel_url(h.general), level="nothing")
    assert answer == {"setting": {"channel_id": h.general, "level": "nothing", "muted_until": None}}
    answer = await put(api, h.a, channel_url(voice["id"]), level="default", muted_until=at(until))
    assert answer == {"setting": {"channel_id": voice["id"], "level": "default", "muted_until": at(until)}}
    assert (await api.get(SETTINGS, h.a))["channels"] == sorted([
        {"channel_id": h.general, "level": "nothing", "muted_until": None},
        {"channel_id": voice["id"], "level": "default", "muted_until": at(until)},
    ], key=lambda c: int(c["channel_id"]))

    await put(api, h.a, channel_url(voice["id"]), level="default")  # `default`, not muted: the default
    assert (await api.get(SETTINGS, h.a))["channels"] == [
        {"channel_id": h.general, "level": "nothing", "muted_until": None}]


async def test_a_conversation_setting_defaults_to_all_and_has_no_default_level(api, accounts):
    alice, bob, carol = [await accounts.register(n) for n in ("alice", "bob", "carol")]
    dm = await open_dm(api, alice, bob)

    answer = await put(api, alice, channel_url(dm["id"]), level="mentions")
    assert answer == {"setting": {"channel_id": dm["id"], "level": "mentions", "muted_until": None}}
    assert (await api.get(SETTINGS, alice))["channels"] == [answer["setting"]]

    await put(api, alice, channel_url(dm["id"]), level="all")  # a conversation's default
    assert await api.get(SETTINGS, alice) == EMPTY

    r = await put_raw(api, alice, channel_url(dm["id"]), {"level": "default"})
    invalid(r, "level")
    not_found(await put_raw(api, carol, channel_url(dm["id"]), {"level": "nothing"}), "channel.not_found")
    assert await api.get(SETTINGS, alice) == EMPTY


# ---- refusals -----------------------------------------------------------------------------------------


async def test_only_members_set_a_guild_setting(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    admin = await admin_account(client, accounts, rt, "root")  # sees every server, is a member of none

    for who, target in ((h.outsider, h.id), (admin, h.id), (h.a, "12345"), (h.a, "not-an-id")):
        not_found(await put_raw(api, who, guild_url(target), {"level": "all"}), "guild.not_found")
    assert await api.get(SETTINGS, h.outsider) == EMPTY
    assert await api.get(SETTINGS, admin) == EMPTY


@pytest.mark.parametrize("body, field", [
    ({}, "level"),
    ({"level": "loud"}, "level"),
    ({"level": "default"}, "level"),  # a server has no `default`
    ({"level": "all", "muted_until": "tomorrow"}, "muted_until"),
    ({"level": "all", "muted_until": "2030-01-01T12:00:00"}, "muted_until"),  # no time zone
    ({"level": "all", "suppress_everyone": "maybe"}, "suppress_everyone"),
    ({"level": "all", "suppress_everyone": 0}, "suppress_everyone"),
    ({"level": "all", "suppress_everyone": None}, "suppress_everyone"),
])
async def test_a_guild_setting_is_validated(api, client, accounts, rt, body, field):
    h = await hall(client, accounts, rt)
    invalid(await put_raw(api, h.a, guild_url(h.id), body), field)
    assert await api.get(SETTINGS, h.a) == EMPTY


@pytest.mark.parametrize("body, field", [
    ({}, "level"),
    ({"level": "everything"}, "level"),
    ({"level": "all", "muted_until": 12}, "muted_until"),
    ({"level": None}, "level"),
])
async def test_a_channel_setting_is_validated(api, client, accounts, rt, body, field):
    h = await hall(client, accounts, rt)
    invalid(await put_raw(api, h.a, channel_url(h.general), body), field)


async def test_a_room_the_caller_may_not_set(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    category = await room(client, h.owner, h.id, name="Upstairs", type="category")
    hidden = await room(client, h.owner, h.id, name="council")
    await override(client, h.owner, hidden["id"], h.id, "role", deny="VIEW_CHANNEL")
    admin = await admin_account(client, accounts, rt, "root")

    assert_error(await put_raw(api, h.a, channel_url(category["id"]), {"level": "all"}), 422, "channel.wrong_type")
    not_found(await put_raw(api, h.a, channel_url(hidden["id"]), {"level": "all"}), "channel.not_found")
    not_found(await put_raw(api, h.outsider, channel_url(h.general), {"level": "all"}), "channel.not_found")
    not_found(await put_raw(api, admin, channel_url(h.general), {"level": "all"}), "channel.not_found")
    not_found(await put_raw(api, h.a, channel_url("98765"), {"level": "all"}), "channel.not_found")
    assert await api.get(SETTINGS, h.a) == EMPTY
    # The owner sees the hidden room and may set it.
    await put(api, h.owner, channel_url(hidden["id"]), level="nothing")


# ---- the event and READY --------------------------------------------------------------------------------


async def test_a_change_reaches_every_connection_of_the_user_and_nobody_else(api, client, accounts, rt, gateway):
    h = await hall(client, accounts, rt)
    phone, laptop = await gateway.identified(h.a["token"]), await gateway.identified(h.a["token"])
    other = await gateway.identified(h.b["token"])

    answer = await put(api, h.a, guild_url(h.id), level="all", suppress_everyone=True)
    for connection in (phone, laptop):
        assert await connection.dispatch("NOTIFICATION_SETTINGS_UPDATE") == answer["setting"]
    answer = await put(api, h.a, channel_url(h.general), level="nothing")
    for connection in (phone, laptop):
        assert await connection.dispatch("NOTIFICATION_SETTINGS_UPDATE") == answer["setting"]
    await other.no_dispatch("NOTIFICATION_SETTINGS_UPDATE")


async def test_a_refused_change_emits_nothing(api, client, accounts, rt, capture_events):
    h = await hall(client, accounts, rt)
    await capture_events.reset()
    not_found(await put_raw(api, h.outsider, guild_url(h.id), {"level": "all"}), "guild.not_found")
    invalid(await put_raw(api, h.a, guild_url(h.id), {"level": "loud"}), "level")
    await capture_events.settle()
    assert capture_events.of_type("NOTIFICATION_SETTINGS_UPDATE") == []


async def test_ready_carries_the_settings_as_get_lists_them(api, client, accounts, rt, gateway, clock):
    clock.set(START)
    h = await hall(client, accounts, rt)
    dm = await open_dm(api, h.a, h.b)
    await put(api, h.a, guild_url(h.id), level="nothing", muted_until=at(START + timedelta(hours=1)))
    await put(api, h.a, channel_url(h.general), level="all")
    await put(api, h.a, channel_url(dm["id"]), level="nothing")

    ready = await (await gateway.connect()).identify(h.a["token"])

    assert ready["notification_settings"] == await api.get(SETTINGS, h.a)
    assert len(ready["notification_settings"]["channels"]) == 2
    fresh = await (await gateway.connect()).identify(h.b["token"])
    assert fresh["notification_settings"] == EMPTY


# ---- the settings go with what they hang on ---------------------------------------------------------------


async def set_everything(api: Any, who: Any, guild_id: str, *room_ids: str) -> None:
    await put(api, who, guild_url(guild_id), level="all")
    for room_id in room_ids:
        await put(api, who, channel_url(room_id), level="nothing")


async def listed_guilds(api: Any, who: Any) -> list[str]:
    return [g["guild_id"] for g in (await api.get(SETTINGS, who))["guilds"]]


async def listed_channels(api: Any, who: Any) -> list[str]:
    return [c["channel_id"] for c in (await api.get(SETTINGS, who))["channels"]]


async def test_leaving_a_kick_and_a_ban_delete_the_guilds_settings_and_its_rooms(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    carol = await accounts.register("carol")
    await add_member(rt, h.id, carol)
    other = await room(client, h.owner, h.id, name="kitchen")
    dm = await open_dm(api, h.a, h.b)
    for who in (h.a, h.b, carol):
        await set_everything(api, who, h.id, h.general, other["id"])
    await put(api, h.a, channel_url(dm["id"]), level="nothing")  # not the guild's: stays

    await api.delete(f"/users/@me/guilds/{h.id}", h.a)
    await api.delete(f"/guilds/{h.id}/members/{h.b.id}", h.owner)
    await api.put(f"/guilds/{h.id}/bans/{carol.id}", h.owner, json={})

    assert await api.get(SETTINGS, h.a) == {"guilds": [], "channels": [
        {"channel_id": dm["id"], "level": "nothing", "muted_until": None}]}
    assert await api.get(SETTINGS, h.b) == EMPTY
    assert await api.get(SETTINGS, carol) == EMPTY
    await add_member(rt, h.id, h.a)  # back again: the defaults
    assert await listed_guilds(api, h.a) == []


async def test_deleting_a_room_or_the_guild_deletes_their_settings(api, client, accounts, rt):
    h = await hall(client, accounts, rt)
    other = await room(client, h.owner, h.id, name="kitchen")
    await set_everything(api, h.a, h.id, h.general, other["id"])

    await api.delete(f"/channels/{other['id']}", h.owner)
    assert await listed_channels(api, h.a) == [h.general]

    await api.delete(f"/guilds/{h.id}", h.owner)  # the owner signed up moments ago: stepped up
    assert await api.get(SETTINGS, h.a) == EMPTY


async def test_leaving_a_conversation_deletes_its_setting_only_for_the_one_who_left(api, accounts):
    alice, bob, carol = [await accounts.register(n) for n in ("alice", "bob", "carol")]
    conv = await group(api, alice, bob, carol, name="Mead club")
    for who in (bob, carol):
        await put(api, who, channel_url(conv["id"]), level="nothing")

    await leave(api, bob, conv)

    assert await api.get(SETTINGS, bob) == EMPTY
    assert await listed_channels(api, carol) == [conv["id"]]
    not_found(await put_raw(api, bob, channel_url(conv["id"]), {"level": "nothing"}), "channel.not_found")
