"""Private answers are never stored by a cache (docs/files.md, "Serving"): every answer to a request that
carried a session, by Bearer token or by cookie, errors and streamed answers included, and every answer that
hands out a session token, a TOTP secret or backup codes, has `Cache-Control: no-store`; file content keeps
its own long private rule, and an anonymous answer is left as it was."""

from __future__ import annotations

import pytest

from tests.support.accounts import cookie, login
from tests.support.admin import admin_account, user_url
from tests.support.files import attached, fetch
from tests.support.guilds import make_guild
from tests.support.http import API

FILE_RULE = "private, max-age=31536000, immutable"


def not_stored(r) -> None:
    assert r.headers.get("Cache-Control") == "no-store", (r.status_code, dict(r.headers))


@pytest.mark.parametrize("path", ["/users/@me", "/users/@me/channels", "/users/@me/relationships",
                                  "/users/@me/guilds"])
async def test_signed_in_reads_are_not_stored(api, accounts, path):
    alice = await accounts.register("alice")

    not_stored(await api.request("GET", path, alice, expect=200))


async def test_answers_to_a_cookie_session_are_not_stored(client, accounts):
    alice = await accounts.register("alice")

    r = await client.get(f"{API}/users/@me", headers=cookie(alice["token"]))

    assert r.status_code == 200, r.text
    not_stored(r)


async def test_an_error_answer_to_a_signed_in_request_is_not_stored(api, accounts):
    alice = await accounts.register("alice")

    not_stored(await api.request("GET", "/guilds/123456789", alice, expect=404))
    not_stored(await api.request("PATCH", "/users/@me", alice, json={"display_name": "x" * 500}, expect=422))
    not_stored(await api.request("GET", "/users/@me", None, headers={"Authorization": "Bearer not-a-token"},
                                 expect=401))


async def test_the_administrators_view_of_a_user_and_the_audit_export_are_not_stored(client, api, accounts, rt):
    admin = await admin_account(client, accounts, rt)
    bob = await accounts.register("bob")

    not_stored(await api.request("GET", user_url(bob.id), admin, expect=200))
    export = await api.request("GET", "/instance/audit-logs/export", admin, expect=200)
    assert export.headers["Content-Type"].startswith("text/csv")
    not_stored(export)


async def test_sign_in_and_second_factor_answers_are_not_stored(client, accounts):
    alice = await accounts.register("alice")
    not_stored(await login(client, "alice", alice["password"]))

    setup = await client.post(f"{API}/auth/2fa/setup", headers=alice.headers)
    assert setup.status_code == 200 and "secret" in setup.json(), setup.text
    not_stored(setup)


async def test_file_content_keeps_its_own_cache_rule(client, accounts, rt):
    alice = await accounts.register("alice")
    guild = await make_guild(client, alice)
    file = await attached(client, alice, guild["system_channel_id"], b"kept for a year")

    full = await fetch(client, alice, file["id"])
    again = await fetch(client, alice, file["id"], **{"If-None-Match": full.headers["ETag"]})
    by_cookie = await client.get(f"/files/{file['id']}", headers=cookie(alice["token"]))

    assert (full.status_code, again.status_code, by_cookie.status_code) == (200, 304, 200)
    assert [r.headers["Cache-Control"] for r in (full, again, by_cookie)] == [FILE_RULE] * 3
    metadata = await client.get(f"{API}/files/{file['id']}", headers=alice.headers)
    not_stored(metadata)  # the file's metadata is an ordinary private answer


async def test_an_anonymous_answer_is_left_as_it_was(client):
    r = await client.get(f"{API}/meta")

    assert r.status_code == 200
    assert "no-store" not in r.headers.get("Cache-Control", "")
