"""The session cache (auth/sessions.py): a session presented again is answered without reading it,
yet every revocation applies to the very next request, on this node and on any other, whether it went
through the service or was written straight into the database."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy import delete, update

from meadhall.accounts import admin_ops
from meadhall.app import create_app
from meadhall.db.schema import sessions, users
from meadhall.runtime import Runtime
from tests.support.accounts import LOGOUT, LOGOUT_ALL, ME, SESSIONS, bearer, cookie, second_session
from tests.support.http import assert_error

GUILDS = "/api/v1/guilds"


async def warm(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    """Two answered requests: the second one comes from the cache."""
    for _ in range(2):
        r = await client.get(ME, headers=headers)
        assert r.status_code == 200, r.text


async def test_a_session_presented_again_is_not_read_again(client, accounts, assert_query_count):
    a = await accounts.register("alice")
    await client.get(ME, headers=a.headers)
    with assert_query_count(100) as statements:
        assert (await client.get(ME, headers=a.headers)).status_code == 200
    assert not [s for s in statements if "FROM sessions" in s], statements


async def test_logout_applies_to_the_next_request(client, accounts):
    a = await accounts.register("alice")
    await warm(client, a.headers)
    assert (await client.post(LOGOUT, headers=a.headers)).status_code == 204
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")


async def test_logout_with_a_cookie_applies_to_the_next_request(client, accounts):
    a = await accounts.register("alice")
    await warm(client, cookie(a["token"]))
    assert (await client.post(LOGOUT, headers=cookie(a["token"]))).status_code == 204
    assert_error(await client.get(ME, headers=cookie(a["token"])), 401, "auth.unauthorized")


async def test_revoking_another_session_applies_to_its_next_request(client, accounts):
    a = await accounts.register("alice")
    other = await second_session(client, a)
    await warm(client, bearer(other["token"]))
    r = await client.delete(f"{SESSIONS}/{other['session']['id']}", headers=a.headers)
    assert r.status_code == 204
    assert_error(await client.get(ME, headers=bearer(other["token"])), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=a.headers)).status_code == 200


async def test_logout_all_applies_to_every_cached_session(client, accounts):
    a = await accounts.register("alice")
    others = [await second_session(client, a) for _ in range(2)]
    for s in others:
        await warm(client, bearer(s["token"]))
    await warm(client, a.headers)
    assert (await client.post(LOGOUT_ALL, headers=a.headers)).status_code == 204
    for token in [a["token"], *(s["token"] for s in others)]:
        assert_error(await client.get(ME, headers=bearer(token)), 401, "auth.unauthorized")


async def test_password_change_ends_the_other_cached_sessions(client, accounts):
    a = await accounts.register("alice")
    other = await second_session(client, a)
    await warm(client, bearer(other["token"]))
    r = await client.post("/api/v1/auth/password", json={"new_password": "a whole new passphrase"},
                          headers=a.headers)
    assert r.status_code == 204, r.text
    assert_error(await client.get(ME, headers=bearer(other["token"])), 401, "auth.unauthorized")


async def test_ban_written_into_the_database_applies_to_the_next_request(client, accounts, rt, clock):
    a = await accounts.register("alice")
    await warm(client, a.headers)
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(a.id)).values(banned_at=clock.now()))
    assert_error(await client.get(ME, headers=a.headers), 403, "user.banned")


async def test_account_deleted_in_the_database_applies_to_the_next_request(client, accounts, rt, clock):
    a = await accounts.register("alice")
    await warm(client, a.headers)
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(a.id)).values(deleted_at=clock.now()))
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")


async def test_session_deleted_in_the_database_applies_to_the_next_request(client, accounts, rt):
    a = await accounts.register("alice")
    await warm(client, a.headers)
    async with rt.engine.begin() as conn:
        await conn.execute(delete(sessions).where(sessions.c.id == int(a["session"]["id"])))
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")


async def _guild_of(client: httpx.AsyncClient, owner: Any) -> str:
    r = await client.post(GUILDS, json={"name": "Cache hall"}, headers=owner.headers)
    assert r.status_code == 201, r.text
    return str(r.json()["guild"]["id"])


async def test_instance_admin_flag_written_into_the_database_applies_to_the_next_request(client, accounts, rt):
    owner, b = await accounts.register("owner"), await accounts.register("bob")
    guild_id = await _guild_of(client, owner)
    for _ in range(2):
        assert (await client.get(f"{GUILDS}/{guild_id}", headers=b.headers)).status_code == 404
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(b.id)).values(is_instance_admin=True))
    assert (await client.get(f"{GUILDS}/{guild_id}", headers=b.headers)).status_code == 200
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id == int(b.id)).values(is_instance_admin=False))
    assert (await client.get(f"{GUILDS}/{guild_id}", headers=b.headers)).status_code == 404


async def test_a_cached_session_still_expires(client, accounts, clock):
    a = await accounts.register("alice")
    await warm(client, a.headers)
    clock.advance(days=30)
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")


async def test_a_cached_session_is_still_refreshed_once_a_minute(client, accounts, clock):
    a = await accounts.register("alice")
    await warm(client, a.headers)
    clock.advance(seconds=61)
    await warm(client, a.headers)
    [mine] = [s for s in (await client.get(SESSIONS, headers=a.headers)).json()["sessions"] if s["current"]]
    last_used = mine["last_used_at"]
    clock.advance(seconds=30)
    await warm(client, a.headers)
    [again] = [s for s in (await client.get(SESSIONS, headers=a.headers)).json()["sessions"] if s["current"]]
    assert again["last_used_at"] == last_used


async def test_the_old_token_of_a_rotated_session_stops_after_its_grace_period(client, accounts, clock, rt):
    a = await accounts.register("alice")
    clock.advance(hours=rt.settings.SESSION_ROTATE_HOURS, seconds=1)
    r = await client.get(ME, headers=a.headers)
    assert r.status_code == 200
    new_token = r.headers["X-Session-Token"]
    await warm(client, a.headers)  # the old token, in its grace period (cached under the new epoch)
    await warm(client, bearer(new_token))
    clock.advance(seconds=61)
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")
    assert (await client.get(ME, headers=bearer(new_token))).status_code == 200


# ---- two nodes on one database (and one Redis when the tests have it) ---------------------------------


@pytest.fixture
async def node_b(settings, clock, rt) -> AsyncIterator[tuple[Runtime, httpx.AsyncClient]]:
    """A second service process: its own runtime, engine and session cache, the same database."""
    prefix = getattr(rt.store, "prefix", f"test-{uuid.uuid4().hex[:12]}")
    other = Runtime(settings, clock=clock, redis_prefix=prefix)
    other.password_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    await other.start(run_migrations=False)
    transport = httpx.ASGITransport(app=create_app(settings, other), raise_app_exceptions=False)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            yield other, c
    finally:
        await other.close()


async def test_logout_on_one_node_applies_to_the_next_request_on_another(client, accounts, node_b):
    _, client_b = node_b
    a = await accounts.register("alice")
    await warm(client, a.headers)
    await warm(client_b, a.headers)
    assert (await client_b.post(LOGOUT, headers=a.headers)).status_code == 204
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")


async def test_password_reset_by_an_administrator_applies_on_every_node(client, accounts, node_b):
    rt_b, client_b = node_b
    a = await accounts.register("alice")
    await warm(client, a.headers)
    await warm(client_b, a.headers)
    await admin_ops.reset_password(rt_b, "alice@example.com", None)  # the CLI, on node B
    assert_error(await client.get(ME, headers=a.headers), 401, "auth.unauthorized")
    assert_error(await client_b.get(ME, headers=a.headers), 401, "auth.unauthorized")


async def test_admin_grant_on_one_node_ends_the_session_on_another(client, accounts, node_b):
    """A grant deletes the grantee's sessions (docs/operations.md): the next request on another node is 401."""
    rt_b, client_b = node_b
    owner, b = await accounts.register("owner"), await accounts.register("bob")
    guild_id = await _guild_of(client, owner)
    for _ in range(2):
        assert (await client.get(f"{GUILDS}/{guild_id}", headers=b.headers)).status_code == 404
    await admin_ops.make_admin(rt_b, "bob@example.com")
    assert_error(await client.get(f"{GUILDS}/{guild_id}", headers=b.headers), 401, "auth.unauthorized")


async def test_admin_removal_on_one_node_applies_to_the_next_request_on_another(client, accounts, node_b, rt):
    rt_b, client_b = node_b
    owner, b = await accounts.register("owner"), await accounts.register("bob")
    guild_id = await _guild_of(client, owner)
    async with rt.engine.begin() as conn:
        await conn.execute(update(users).where(users.c.id.in_([int(owner.id), int(b.id)]))
                           .values(is_instance_admin=True))
    for _ in range(2):
        assert (await client.get(f"{GUILDS}/{guild_id}", headers=b.headers)).status_code == 200
    await admin_ops.remove_admin(rt_b, "bob@example.com")
    assert (await client.get(f"{GUILDS}/{guild_id}", headers=b.headers)).status_code == 404
