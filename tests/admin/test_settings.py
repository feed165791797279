"""Instance settings (docs/admin.md, "Media limits"; OpenAPI: getInstanceSettings, updateInstanceSettings):
defaults until written, any subset written, range and unknown names refused with the field named, the
audit entry with old and new values, and GET /meta showing the limits in force at once."""

from __future__ import annotations

from sqlalchemy import select

from meadhall.core.clock import iso
from meadhall.db.schema import audit_log, instance_settings
from tests.support.admin import admin_account
from tests.support.http import Api, assert_error, invalid

DEFAULTS = {"avatar_max_bytes": 8388608, "guild_image_max_bytes": 8388608, "emoji_max_bytes": 524288,
            "sound_max_bytes": 524288, "gallery_max_bytes": 1048576}
EPOCH = "1970-01-01T00:00:00.000Z"


async def settings_audit(rt):
    stmt = select(audit_log).where(audit_log.c.action == "instance.settings_update").order_by(audit_log.c.id)
    async with rt.engine.connect() as conn:
        return [dict(r) for r in (await conn.execute(stmt)).mappings()]


async def test_non_administrators_are_refused(client, accounts, rt):
    api, alice = Api(client), await accounts.register("alice")
    assert_error(await api.request("GET", "/instance/settings", alice, expect=None), 403, "perm.denied")
    r = await api.request("PATCH", "/instance/settings", alice, expect=None,
                          json={"media_limits": {"emoji_max_bytes": 2048}})
    assert_error(r, 403, "perm.denied")
    assert (await api.get("/meta"))["limits"]["emoji_max_bytes"] == DEFAULTS["emoji_max_bytes"]
    assert await settings_audit(rt) == []


async def test_defaults_until_written(client, accounts, rt):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    body = await api.get("/instance/settings", admin)
    assert body == {"settings": {"media_limits": DEFAULTS, "updated_at": EPOCH}}
    async with rt.engine.connect() as conn:
        assert (await conn.execute(select(instance_settings))).first() is None


async def test_subset_is_written_audited_and_shown_by_meta_at_once(client, accounts, rt, clock):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    clock.advance(5)
    body = await api.patch("/instance/settings", admin, json={"media_limits": {"emoji_max_bytes": 2048,
                                                                                "sound_max_bytes": 104857600}})
    limits = {**DEFAULTS, "emoji_max_bytes": 2048, "sound_max_bytes": 104857600}
    assert body == {"settings": {"media_limits": limits, "updated_at": iso(clock.now())}}
    assert await api.get("/instance/settings", admin) == body
    meta = (await api.get("/meta"))["limits"]
    assert {k: meta[k] for k in DEFAULTS} == limits
    [entry] = await settings_audit(rt)
    assert entry["actor_id"] == int(admin.id) and entry["guild_id"] is None and entry["target_type"] == "settings"
    assert entry["data"] == {"changes": {"media_limits.emoji_max_bytes": [524288, 2048],
                                         "media_limits.sound_max_bytes": [524288, 104857600]}}
    # A second write keeps the others and records only what changed.
    clock.advance(60)
    body = await api.patch("/instance/settings", admin, json={"media_limits": {"emoji_max_bytes": 1024,
                                                                                "avatar_max_bytes": 8388608}})
    assert body["settings"]["media_limits"] == {**limits, "emoji_max_bytes": 1024}
    assert body["settings"]["updated_at"] == iso(clock.now())
    entries = await settings_audit(rt)
    assert [e["data"] for e in entries[1:]] == [{"changes": {"media_limits.emoji_max_bytes": [2048, 1024]}}]
    assert (await api.get("/meta"))["limits"]["emoji_max_bytes"] == 1024


async def test_empty_body_and_unchanged_values_write_nothing(client, accounts, rt):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    for body in ({}, {"media_limits": {}}, {"media_limits": {"gallery_max_bytes": 1048576}}):
        answer = await api.patch("/instance/settings", admin, json=body)
        assert answer == {"settings": {"media_limits": DEFAULTS, "updated_at": EPOCH}}
    assert await settings_audit(rt) == []


async def test_out_of_range_unknown_and_malformed_values_are_refused(client, accounts, rt):
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    cases = [
        ({"avatar_max_bytes": 1023}, "media_limits.avatar_max_bytes"),
        ({"guild_image_max_bytes": 104857601}, "media_limits.guild_image_max_bytes"),
        ({"emoji_max_bytes": 0}, "media_limits.emoji_max_bytes"),
        ({"sound_max_bytes": -5}, "media_limits.sound_max_bytes"),
        ({"gallery_max_bytes": "2048"}, "media_limits.gallery_max_bytes"),
        ({"gallery_max_bytes": 2048.5}, "media_limits.gallery_max_bytes"),
        ({"gallery_max_bytes": True}, "media_limits.gallery_max_bytes"),
        ({"avatar_max_bytes": None}, "media_limits"),
        ({"attachment_max_bytes": 2048}, "media_limits.attachment_max_bytes"),
        ({"emoji_max_bytes": 2048, "avatar_max_bytes": 10}, "media_limits.avatar_max_bytes"),
    ]
    for limits, field in cases:
        r = await api.request("PATCH", "/instance/settings", admin, expect=None, json={"media_limits": limits})
        invalid(r, field)
    invalid(await api.request("PATCH", "/instance/settings", admin, expect=None, json={"registration": True}),
            "registration")
    invalid(await api.request("PATCH", "/instance/settings", admin, expect=None, json={"media_limits": None}),
            "media_limits")
    invalid(await api.request("PATCH", "/instance/settings", admin, expect=None, json={"media_limits": 5}),
            "media_limits")
    # Nothing of a refused request was kept, not even its valid part.
    assert (await api.get("/instance/settings", admin))["settings"]["media_limits"] == DEFAULTS
    assert await settings_audit(rt) == []


async def test_a_whole_number_written_with_a_fraction_part_is_that_integer(client, accounts, rt):
    # JSON has one number type and JSON Schema counts 2048.0 as an integer: a client whose encoder writes it
    # so is not refused (the strings, booleans and 2048.5 of the test above still are).
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    r = await api.request("PATCH", "/instance/settings", admin, expect=200,
                          json={"media_limits": {"gallery_max_bytes": 2048.0}})
    assert r.json()["settings"]["media_limits"]["gallery_max_bytes"] == 2048
    assert (await api.get("/instance/settings", admin))["settings"]["media_limits"]["gallery_max_bytes"] == 2048


async def test_the_document_states_the_range_of_each_limit(client):
    # The range is a rule clients read from the OpenAPI document; refusing what it does not state is a bug.
    doc = (await client.get("/api/v1/openapi.json")).json()
    patch = doc["components"]["schemas"]["MediaLimitsPatch"]["properties"]
    for name in DEFAULTS:
        limit = next(s for s in patch[name].get("anyOf", [patch[name]]) if s.get("type") == "integer")
        assert (limit["minimum"], limit["maximum"]) == (1024, 104857600), name
