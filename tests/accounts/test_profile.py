"""Own profile and public summaries (the OpenAPI document): GET/PATCH /users/@me, onboarding completion,
GET /users/{id}."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import update

from meadhall.db.schema import users
from tests.support.factories import make_admin
from tests.support.http import assert_error
from tests.support.shapes import SUMMARY_FIELDS

ME = "/api/v1/users/@me"
ONBOARDING = "/api/v1/users/@me/onboarding/complete"


async def patch(client: Any, account: Any, body: dict[str, Any]) -> Any:
    return await client.patch(ME, json=body, headers=account.headers)


async def me(client: Any, account: Any) -> dict[str, Any]:
    r = await client.get(ME, headers=account.headers)
    assert r.status_code == 200, r.text
    return r.json()["user"]


def fields(r: Any) -> set[str]:
    return {d["field"] for d in assert_error(r, 422, "validation.failed")["details"]}


# ---- GET /users/@me ------------------------------------------------------------------------------


async def test_get_me_returns_the_private_user(client, accounts):
    a = await accounts.register("alice", email="Alice@Example.com")
    r = await client.get(ME, headers=a.headers)
    assert r.status_code == 200, r.text
    assert set(r.json()) == {"user"}
    user = r.json()["user"]
    assert user["id"] == a.id and user["username"] == "alice" and user["email"] == "Alice@Example.com"
    assert {k: v for k, v in user.items() if k != "last_seen_at"} == {
        k: v for k, v in a["user"].items() if k != "last_seen_at"
    }


async def test_get_me_requires_a_session(client):
    assert_error(await client.get(ME), 401, "auth.unauthorized")


# ---- PATCH /users/@me ----------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [
    ("display_name", "Alice Liddell"),
    ("display_name", "Алиса"),
    ("bio", "Curiouser and curiouser"),
    ("bio", ""),
    ("bio", "b" * 500),
    ("status", "idle"),
    ("status", "dnd"),
    ("status", "invisible"),
    ("status", "online"),
    ("custom_status", "Down the rabbit hole"),
    ("custom_status_emoji", "🐇"),
    ("custom_status_emoji", "<:rabbit:123456789012345678>"),
    ("locale", "ru"),
    ("locale", "pt-BR"),
    ("timezone", "America/New_York"),
    ("timezone", "UTC"),
])
async def test_patch_each_editable_field(client, accounts, capture_events, field, value):
    a = await accounts.register("alice")
    before = await me(client, a)
    r = await patch(client, a, {field: value})
    assert r.status_code == 200, r.text
    user = r.json()["user"]
    assert user[field] == value
    # Nothing else changed.
    assert {k: v for k, v in user.items() if k not in (field, "last_seen_at")} == {
        k: v for k, v in before.items() if k not in (field, "last_seen_at")
    }
    assert (await me(client, a))[field] == value
    await capture_events.settle()
    [ev] = capture_events.of_type("USER_UPDATE")
    assert ev.users == (int(a.id),)
    assert ev.data[field] == value


async def test_patch_several_fields_at_once(client, accounts):
    a = await accounts.register("alice")
    body = {"display_name": "Al", "bio": "hi", "status": "dnd", "custom_status": "busy",
            "custom_status_emoji": "⛔", "locale": "de", "timezone": "Europe/Berlin"}
    r = await patch(client, a, body)
    assert r.status_code == 200, r.text
    assert {k: r.json()["user"][k] for k in body} == body


async def test_patch_ignores_unknown_and_protected_fields(client, accounts):
    a = await accounts.register("alice")
    r = await patch(client, a, {
        "is_instance_admin": True, "username": "root", "email": "root@example.com", "totp_enabled": True,
        "badges": ["instance_admin"], "password_reset_required": True, "id": "1", "favourite_colour": "blue",
    })
    assert r.status_code == 200, r.text
    user = await me(client, a)
    assert user["is_instance_admin"] is False and user["badges"] == []
    assert user["username"] == "alice" and user["email"] == "alice@example.com"
    assert user["totp_enabled"] is False and user["password_reset_required"] is False
    assert user["id"] == a.id
    assert "favourite_colour" not in user


async def test_empty_custom_status_is_stored_as_null(client, accounts):
    a = await accounts.register("alice")
    assert (await patch(client, a, {"custom_status": "away", "custom_status_emoji": "🌙"})).status_code == 200
    r = await patch(client, a, {"custom_status": "", "custom_status_emoji": ""})
    assert r.status_code == 200, r.text
    assert r.json()["user"]["custom_status"] is None
    assert r.json()["user"]["custom_status_emoji"] is None
    assert (await me(client, a))["custom_status"] is None


async def test_null_clears_custom_status(client, accounts):
    a = await accounts.register("alice")
    assert (await patch(client, a, {"custom_status": "away", "custom_status_emoji": "🌙"})).status_code == 200
    r = await patch(client, a, {"custom_status": None})
    assert r.status_code == 200, r.text
    user = r.json()["user"]
    assert user["custom_status"] is None
    assert user["custom_status_emoji"] == "🌙"  # absent means unchanged
    r = await patch(client, a, {"custom_status_emoji": None})
    assert r.json()["user"]["custom_status_emoji"] is None


async def test_absent_fields_are_unchanged(client, accounts):
    a = await accounts.register("alice")
    assert (await patch(client, a, {"bio": "kept", "custom_status": "kept too"})).status_code == 200
    r = await patch(client, a, {"status": "idle"})
    assert r.json()["user"]["bio"] == "kept" and r.json()["user"]["custom_status"] == "kept too"


@pytest.mark.parametrize(("body", "field"), [
    ({"display_name": None}, "display_name"),
    ({"display_name": ""}, "display_name"),
    ({"display_name": "   "}, "display_name"),
    ({"display_name": "d" * 33}, "display_name"),
    ({"bio": None}, "bio"),
    ({"bio": "b" * 501}, "bio"),
    ({"status": "offline"}, "status"),
    ({"status": "busy"}, "status"),
    ({"status": None}, "status"),
    ({"custom_status": "c" * 129}, "custom_status"),
    ({"custom_status_emoji": "smile"}, "custom_status_emoji"),
    ({"custom_status_emoji": "<:x:1>"}, "custom_status_emoji"),
    ({"locale": "EN"}, "locale"),
    ({"locale": "en_US"}, "locale"),
    ({"locale": "e"}, "locale"),
    ({"locale": None}, "locale"),
    ({"timezone": "Europe/Atlantis"}, "timezone"),
    ({"timezone": "europe/moscow"}, "timezone"),
    ({"timezone": None}, "timezone"),
])
async def test_patch_rejects_invalid_values(client, accounts, body, field):
    a = await accounts.register("alice")
    before = await me(client, a)
    r = await patch(client, a, body)
    assert fields(r) == {field}
    after = await me(client, a)
    assert {k: v for k, v in after.items() if k != "last_seen_at"} == {
        k: v for k, v in before.items() if k != "last_seen_at"
    }


async def test_patch_rejects_a_body_that_is_not_an_object(client, accounts):
    a = await accounts.register("alice")
    r = await client.patch(ME, content=b"{not json", headers={**a.headers, "Content-Type": "application/json"})
    assert fields(r) == {"body"}


# ---- onboarding ----------------------------------------------------------------------------------


async def test_onboarding_sets_profile_and_timestamp_once(client, accounts, clock):
    a = await accounts.register("alice")
    r = await client.post(ONBOARDING, json={"display_name": "Alice", "bio": "hello", "locale": "fr"},
                          headers=a.headers)
    assert r.status_code == 200, r.text
    user = r.json()["user"]
    assert (user["display_name"], user["bio"], user["locale"]) == ("Alice", "hello", "fr")
    first = user["onboarding_completed_at"]
    assert first is not None
    clock.advance(3600)
    r = await client.post(ONBOARDING, json={"display_name": "Alice L."}, headers=a.headers)
    assert r.status_code == 200, r.text
    user = r.json()["user"]
    assert user["onboarding_completed_at"] == first
    assert user["display_name"] == "Alice L." and user["bio"] == "hello" and user["locale"] == "fr"
    assert (await me(client, a))["onboarding_completed_at"] == first


async def test_onboarding_requires_display_name(client, accounts):
    a = await accounts.register("alice")
    r = await client.post(ONBOARDING, json={"bio": "no name"}, headers=a.headers)
    assert fields(r) == {"display_name"}
    assert (await me(client, a))["onboarding_completed_at"] is None
    r = await client.post(ONBOARDING, json={"display_name": "A", "locale": "Klingon!"}, headers=a.headers)
    assert fields(r) == {"locale"}
    assert (await me(client, a))["onboarding_completed_at"] is None


async def test_onboarding_ignores_other_fields(client, accounts):
    a = await accounts.register("alice")
    r = await client.post(ONBOARDING, json={"display_name": "A", "status": "dnd", "is_instance_admin": True},
                          headers=a.headers)
    assert r.status_code == 200, r.text
    assert r.json()["user"]["status"] == "online" and r.json()["user"]["is_instance_admin"] is False


# ---- GET /users/{id} -----------------------------------------------------------------------------


async def test_summary_of_another_user(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    assert (await patch(client, b, {"display_name": "Bobby", "bio": "builder", "custom_status": "building",
                                    "custom_status_emoji": "🔨", "locale": "de",
                                    "timezone": "Europe/Berlin"})).status_code == 200
    r = await client.get(f"/api/v1/users/{b.id}", headers=a.headers)
    assert r.status_code == 200, r.text
    assert set(r.json()) == {"user"}
    user = r.json()["user"]
    assert set(user) == SUMMARY_FIELDS
    assert user == {
        "id": b.id, "username": "bob", "display_name": "Bobby", "avatar": None, "bio": "builder",
        "status": "online", "custom_status": "building", "custom_status_emoji": "🔨", "badges": [],
        "created_at": b["user"]["created_at"], "deleted": False,
    }


async def test_summary_of_self(client, accounts):
    a = await accounts.register("alice")
    r = await client.get(f"/api/v1/users/{a.id}", headers=a.headers)
    assert r.status_code == 200, r.text
    assert set(r.json()["user"]) == SUMMARY_FIELDS
    assert "email" not in r.json()["user"]


async def test_summary_shows_admin_badge(client, accounts, rt):
    a = await accounts.register("alice")
    b = await accounts.register("root")
    await make_admin(rt, b)
    user = (await client.get(f"/api/v1/users/{b.id}", headers=a.headers)).json()["user"]
    assert user["badges"] == ["instance_admin"]
    assert (await me(client, b))["badges"] == ["instance_admin"]


async def test_invisible_is_shown_as_offline_without_custom_status(client, accounts):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    assert (await patch(client, b, {"status": "invisible", "custom_status": "hiding",
                                    "custom_status_emoji": "🙈"})).status_code == 200
    user = (await client.get(f"/api/v1/users/{b.id}", headers=a.headers)).json()["user"]
    assert (user["status"], user["custom_status"], user["custom_status_emoji"]) == ("offline", None, None)
    # The owner still sees the chosen status.
    assert (await me(client, b))["status"] == "invisible"


@pytest.mark.parametrize("chosen", ["idle", "dnd"])
async def test_chosen_status_is_shown_while_active(client, accounts, chosen):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    assert (await patch(client, b, {"status": chosen})).status_code == 200
    assert (await client.get(f"/api/v1/users/{b.id}", headers=a.headers)).json()["user"]["status"] == chosen


async def test_inactive_user_is_offline_after_two_minutes(client, accounts, clock):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    assert (await patch(client, b, {"custom_status": "here"})).status_code == 200
    clock.advance(119)
    user = (await client.get(f"/api/v1/users/{b.id}", headers=a.headers)).json()["user"]
    assert user["status"] == "online" and user["custom_status"] == "here"
    clock.advance(2)
    user = (await client.get(f"/api/v1/users/{b.id}", headers=a.headers)).json()["user"]
    assert (user["status"], user["custom_status"]) == ("offline", None)
    # Activity brings the user back.
    assert (await client.get(ME, headers=b.headers)).status_code == 200
    assert (await client.get(f"/api/v1/users/{b.id}", headers=a.headers)).json()["user"]["status"] == "online"


async def test_summary_of_deleted_user(client, accounts, rt, clock):
    a = await accounts.register("alice")
    b = await accounts.register("bob")
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(b.id)).values(deleted_at=clock.now()))
    user = (await client.get(f"/api/v1/users/{b.id}", headers=a.headers)).json()["user"]
    assert user["deleted"] is True
    assert (user["username"], user["display_name"], user["status"]) == (f"deleted-{b.id}", "Deleted user", "offline")


async def test_unknown_user_is_not_found(client, accounts):
    a = await accounts.register("alice")
    unknown = str(int(a.id) + 12345)
    assert_error(await client.get(f"/api/v1/users/{unknown}", headers=a.headers), 404, "user.not_found")


@pytest.mark.parametrize("raw", ["abc", "-5", "1e5", "99999999999999999999", "%20"])
async def test_malformed_user_id_is_not_found(client, accounts, raw):
    a = await accounts.register("alice")
    assert_error(await client.get(f"/api/v1/users/{raw}", headers=a.headers), 404, "user.not_found")


async def test_summary_requires_a_session(client, accounts):
    a = await accounts.register("alice")
    assert_error(await client.get(f"/api/v1/users/{a.id}"), 401, "auth.unauthorized")
