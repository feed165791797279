"""The account list and one account's detail in instance administration (docs/admin.md, "Users"; OpenAPI:
listInstanceUsers, getInstanceUser)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, update

from meadhall.core.text import norm
from meadhall.db.schema import users
from tests.support.accounts import second_session
from tests.support.admin import admin_account, user_url
from tests.support.factories import add_member
from tests.support.guilds import give, make_guild, make_role
from tests.support.http import assert_error, invalid
from tests.support.passkeys import add_passkey
from tests.support.webauthn import Authenticator

ADMIN_USER_FIELDS = {
    "id", "username", "email", "display_name", "bio", "status", "custom_status", "custom_status_emoji", "locale",
    "timezone", "totp_enabled", "onboarding_completed_at", "is_instance_admin", "badges", "avatar", "last_seen_at",
    "password_reset_required", "created_at", "banned_at", "ban_reason", "banned_by", "deleted_at", "session_count",
    "guild_count"}


async def names(api: Any, admin: Any, **params: Any) -> list[str]:
    body = await api.get("/instance/users", admin, params=params)
    return [u["username"] for u in body["users"]]


async def rename(api: Any, account: Any, display_name: str) -> None:
    await api.patch("/users/@me", account, json={"display_name": display_name})


async def test_list_shape_order_paging_and_total(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    made = [await accounts.register(f"member{i}") for i in range(5)]
    body = await api.get("/instance/users", admin, params={"limit": 2})
    assert set(body) == {"users", "total", "has_more"}
    assert body["total"] == 6 and body["has_more"] is True
    assert [u["username"] for u in body["users"]] == ["member4", "member3"]  # newest first
    assert set(body["users"][0]) == ADMIN_USER_FIELDS
    first = body["users"][0]
    assert first["email"] == "member4@example.com" and first["session_count"] == 1 and first["guild_count"] == 0
    assert first["banned_at"] is None and first["banned_by"] is None and first["deleted_at"] is None

    seen = [u["username"] for u in body["users"]]
    before = body["users"][-1]["id"]
    while True:
        page = await api.get("/instance/users", admin, params={"limit": 2, "before": before})
        assert page["total"] == 6  # the cursor does not change the total
        seen += [u["username"] for u in page["users"]]
        if not page["has_more"]:
            break
        before = page["users"][-1]["id"]
    assert seen == [m["user"]["username"] for m in reversed(made)] + ["root"]
    for bad in ({"limit": 0}, {"limit": 101}, {"before": "abc"}):
        invalid(await api.request("GET", "/instance/users", admin, params=bad, expect=None), next(iter(bad)))


async def test_search_is_case_insensitive_on_username_and_display_name(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    olga = await accounts.register("olga")
    await rename(api, olga, "Ольга Петрова")
    await accounts.register("Peter_Pan")
    other = await accounts.register("other")
    await rename(api, other, "Someone Else")
    assert await names(api, admin, q="PETER") == ["Peter_Pan"]
    assert await names(api, admin, q="ОЛЬГА") == ["olga"]  # Cyrillic folds too (the *_norm columns)
    assert await names(api, admin, q="петров") == ["olga"]
    assert await names(api, admin, q="else") == ["other"]
    body = await api.get("/instance/users", admin, params={"q": "o", "limit": 1})
    assert body["total"] == 3 and body["has_more"] is True  # olga, root, other (Someone Else)


async def test_search_wildcards_are_literal(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    await accounts.register("a_b")
    await accounts.register("axb")
    percent = await accounts.register("percent")
    await rename(api, percent, "100% sure")
    assert await names(api, admin, q="a_b") == ["a_b"]
    assert await names(api, admin, q="_") == ["a_b"]
    assert await names(api, admin, q="%") == ["percent"]
    assert await names(api, admin, q="0%") == ["percent"]
    assert await names(api, admin, q="\\") == []


async def test_search_follows_a_renamed_display_name_and_quotes(api, client, accounts, rt):
    """Parts of three characters or more go through the search index (docs/admin.md): it must follow a
    rename, and a part with quotes or index syntax is text, not a query."""
    admin = await admin_account(client, accounts, rt, "root")
    sigrid = await accounts.register("sigrid")
    await rename(api, sigrid, "Shieldmaiden")
    assert await names(api, admin, q="maiden") == ["sigrid"]
    await rename(api, sigrid, "Skald of Birka")
    assert await names(api, admin, q="maiden") == []
    assert await names(api, admin, q="of birka") == ["sigrid"]
    await rename(api, sigrid, 'The "Quiet" One OR two')
    assert await names(api, admin, q='"quiet"') == ["sigrid"]
    assert await names(api, admin, q="one or two") == ["sigrid"]
    assert await names(api, admin, q="quiet OR root") == []
    body = await api.get("/instance/users", admin, params={"q": "sig"})
    assert body["total"] == 1


async def test_email_is_an_exact_match(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    await accounts.register("alice")
    await accounts.register("alicea")
    assert await names(api, admin, email="alice@example.com") == ["alice"]
    assert await names(api, admin, email="  ALICE@Example.com ") == ["alice"]
    assert await names(api, admin, email="alice@example") == []
    assert await names(api, admin, email="lice@example.com") == []
    body = await api.get("/instance/users", admin, params={"email": "alicea@example.com", "q": "alice"})
    assert body["total"] == 1


async def test_banned_filter_and_ban_record(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    bad = await accounts.register("bad")
    await accounts.register("good")
    await api.post(user_url(bad.id, "/ban"), admin, json={"reason": "  spam  "}, expect=200)
    body = await api.get("/instance/users", admin, params={"banned": "true"})
    assert body["total"] == 1 and [u["username"] for u in body["users"]] == ["bad"]
    [row] = body["users"]
    assert row["ban_reason"] == "spam" and row["banned_at"] is not None and row["session_count"] == 0
    assert row["banned_by"]["id"] == admin.id and row["banned_by"]["username"] == "root"
    assert (await api.get("/instance/users", admin, params={"banned": "false"}))["total"] == 3
    invalid(await api.request("GET", "/instance/users", admin, params={"banned": "yes"}, expect=None), "banned")


async def test_deleted_accounts_are_listed_with_their_deletion_time(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    gone = await accounts.register("gone")
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(gone.id)).values(deleted_at=rt.clock.now()))
    [row] = (await api.get("/instance/users", admin, params={"q": "gone"}))["users"]
    assert row["deleted_at"] is not None
    assert (await api.get(user_url(gone.id), admin))["user"]["deleted_at"] == row["deleted_at"]
    # Nothing can be done to it any more.
    r = await api.request("POST", user_url(gone.id, "/ban"), admin, json={"reason": "x"}, expect=None)
    assert_error(r, 404, "user.not_found")


async def test_total_with_every_match_on_the_first_page_more_pages_and_a_cursor(api, client, accounts, rt):
    """A first page that holds every match gives `total` without a count; with more pages, and on any page
    after a cursor, the count runs. Parts through the trigram index and parts short enough to scan."""
    admin = await admin_account(client, accounts, rt, "root")
    for i in range(4):
        await accounts.register(f"skald{i}")
    await accounts.register("other")
    bard = await accounts.register("bard")
    await rename(api, bard, "Old Skald")
    skalds = ["bard", "skald3", "skald2", "skald1", "skald0"]
    for q in ("skald", "SKAL", "sk", "k"):
        for limit in (50, 5):  # one page with room to spare, one page exactly full
            body = await api.get("/instance/users", admin, params={"q": q, "limit": limit})
            assert ([u["username"] for u in body["users"]], body["total"], body["has_more"]) == (skalds, 5, False), q
        first = await api.get("/instance/users", admin, params={"q": q, "limit": 2})
        assert ([u["username"] for u in first["users"]], first["total"], first["has_more"]) == (skalds[:2], 5, True)
        middle = await api.get("/instance/users", admin, params={"q": q, "limit": 2, "before": first["users"][-1]["id"]})
        assert ([u["username"] for u in middle["users"]], middle["total"], middle["has_more"]) == (skalds[2:4], 5, True)
        last = await api.get("/instance/users", admin, params={"q": q, "limit": 2, "before": middle["users"][-1]["id"]})
        # Fewer rows than the limit after a cursor: the page is not every match, the count says how many.
        assert ([u["username"] for u in last["users"]], last["total"], last["has_more"]) == (skalds[4:], 5, False)
        after = await api.get("/instance/users", admin, params={"q": q, "before": last["users"][-1]["id"]})
        assert (after["users"], after["total"], after["has_more"]) == ([], 5, False)
    for q in ("skaldic", "zq", "%"):  # no match: an empty first page, total 0
        body = await api.get("/instance/users", admin, params={"q": q})
        assert (body["users"], body["total"], body["has_more"]) == ([], 0, False)
    everyone = await api.get("/instance/users", admin, params={"limit": 7})  # no filter: 7 accounts on one page
    assert (len(everyone["users"]), everyone["total"], everyone["has_more"]) == (7, 7, False)
    await api.post(user_url(bard.id, "/ban"), admin, json={"reason": "r"}, expect=200)
    banned = await api.get("/instance/users", admin, params={"banned": "true", "q": "k"})
    assert ([u["username"] for u in banned["users"]], banned["total"], banned["has_more"]) == (["bard"], 1, False)


async def test_totals_of_short_parts_follow_registrations_renames_and_removals(api, client, accounts, rt):
    """The database keeps the total of every part of one or two characters (docs/admin.md): it must follow
    every change of a name, and count an account once however often the part occurs in its names."""
    admin = await admin_account(client, accounts, rt, "root")

    async def check(*more: str) -> None:  # every part of every name, and `more` (as typed: folded first)
        listed = (await api.get("/instance/users", admin, params={"limit": 100}))["users"]
        names = [(norm(u["username"]), norm(u["display_name"])) for u in listed]
        parts = {n[i:i + w] for pair in names for n in pair for w in (1, 2) for i in range(len(n) - w + 1)}
        for part in sorted(parts) + list(more):
            body = await api.get("/instance/users", admin, params={"q": part, "limit": 1})
            assert body["total"] == sum(norm(part) in a or norm(part) in b for a, b in names), part

    anna = await accounts.register("anna")
    await accounts.register("hannah")
    await check("x", "nx", "aa")
    await rename(api, anna, "Straße Ёлка")  # folds to "strasse ёлка": 'ss', 'ё'
    await rename(api, await accounts.register("nils"), "Nils")  # the same letters as the username
    await check("ß", "Ё", "ЁЛ", "na")
    await rename(api, anna, "Anna")  # back: the street and the tree leave
    await check("ss", "ё")
    async with rt.engine.begin() as conn:  # a removed row (the server only ever marks deletion)
        await conn.execute(delete(users).where(users.c.username == "hannah"))
    await check("h", "ah")


async def test_the_list_runs_a_fixed_number_of_queries(api, client, accounts, rt, assert_query_count):
    admin = await admin_account(client, accounts, rt, "root")
    for i in range(6):
        account = await accounts.register(f"m{i}")
        guild = await make_guild(client, account)
        await add_member(rt, guild["id"], admin)
        await second_session(client, account)
    for account_name in ("m0", "m1", "m2"):
        [row] = (await api.get("/instance/users", admin, params={"q": account_name}))["users"]
        await api.post(user_url(row["id"], "/ban"), admin, json={"reason": "r"}, expect=200)
    with assert_query_count(12) as few:
        small = await api.get("/instance/users", admin, params={"limit": 2})
    with assert_query_count(len(few)) as many:
        full = await api.get("/instance/users", admin, params={"limit": 100})
    # The same statements for 2 accounts or 7, less the count: every match is on the full page.
    assert len(many) == len(few) - 1
    assert len(small["users"]) == 2 and len(full["users"]) == 7
    by_name = {u["username"]: u for u in full["users"]}
    assert by_name["root"]["guild_count"] == 6 and by_name["m5"]["guild_count"] == 1
    assert by_name["m5"]["session_count"] == 2 and by_name["m0"]["session_count"] == 0
    assert by_name["m0"]["banned_by"]["id"] == admin.id


async def test_detail_shows_devices_passkeys_servers_events_and_audit(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    owner = await accounts.register("owner")
    target = await accounts.register("target")
    other = await second_session(client, target)
    await add_passkey(client, target, Authenticator(), name="Phone")
    guild = await make_guild(client, owner, "Great Hall")
    await add_member(rt, guild["id"], target)
    role = await make_role(client, owner, guild["id"], "helper")
    await give(client, owner, guild["id"], target, role["id"])
    await api.post(user_url(target.id, "/ban"), admin, json={"reason": "spam"}, expect=200)
    await api.post(user_url(target.id, "/unban"), admin, expect=200)
    await second_session(client, target)

    body = await api.get(user_url(target.id), admin)
    assert set(body) == {"user", "devices", "passkeys", "servers", "security_events", "audit_entries"}
    assert set(body["user"]) == ADMIN_USER_FIELDS
    assert body["user"]["username"] == "target" and body["user"]["guild_count"] == 1
    assert body["user"]["session_count"] == 1 and len(body["devices"]) == 1  # the ban deleted the others
    assert other["session"]["id"] not in {d["id"] for d in body["devices"]}
    assert all(d["current"] is False for d in body["devices"])
    assert set(body["devices"][0]) == {"id", "created_at", "last_used_at", "expires_at", "ip", "user_agent",
                                       "method", "current", "step_up_expires_at"}
    assert [p["name"] for p in body["passkeys"]] == ["Phone"]
    [server] = body["servers"]
    assert server["guild"]["id"] == guild["id"] and server["guild"]["name"] == "Great Hall"
    assert [r["id"] for r in server["roles"]] == [role["id"]] and server["joined_at"]
    types = [e["type"] for e in body["security_events"]]
    assert types[0] == "login.success" and "passkey.register" in types and types[-1] == "register"
    actions = [e["action"] for e in body["audit_entries"]]
    assert actions[:2] == ["instance.user_unban", "instance.user_ban"]
    assert body["audit_entries"][1]["reason"] == "spam"
    assert body["audit_entries"][0]["actor"]["id"] == admin.id

    # The caller's own session is the current one in their own detail.
    mine = await api.get(user_url(admin.id), admin)
    assert [d["current"] for d in mine["devices"]] == [True]
    assert mine["user"]["is_instance_admin"] is True and mine["user"]["totp_enabled"] is True


async def test_detail_keeps_the_latest_fifty(api, client, accounts, rt):
    admin = await admin_account(client, accounts, rt, "root")
    target = await accounts.register("target")
    await api.post(user_url(target.id, "/ban"), admin, json={"reason": "r"}, expect=200)
    for _ in range(52):  # each writes a security event of the target's and an audit entry
        await api.post(user_url(target.id, "/logout-all"), admin, expect=204)
    body = await api.get(user_url(target.id), admin)
    assert len(body["audit_entries"]) == 50 and len(body["security_events"]) == 50
    assert {e["action"] for e in body["audit_entries"]} == {"instance.user_logout_all"}
    assert {e["type"] for e in body["security_events"]} == {"logout_all"}
    ids = [int(e["id"]) for e in body["audit_entries"]]
    assert ids == sorted(ids, reverse=True)
