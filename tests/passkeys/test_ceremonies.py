"""What every passkey ceremony obeys (docs/passkeys.md): the `auth.passkey` bucket shared by the four
ceremony endpoints, and passkeys off when DOMAIN is an IP address (the meta answer says so; list,
rename and revoke keep working)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import insert

from meadhall.config import Settings
from meadhall.db.schema import passkeys
from tests.support.http import assert_error
from tests.support.passkeys import (
    LOGIN_OPTIONS,
    LOGIN_VERIFY,
    PASSKEYS,
    REGISTER_OPTIONS,
    REGISTER_VERIFY,
    STEP_UP,
    login_options,
)

CEREMONY = {"ceremony_id": "x", "credential": {}}


async def test_meta_says_passkeys_are_on(client):
    assert (await client.get("/api/v1/meta")).json()["features"]["passkeys_enabled"] is True


async def test_one_bucket_of_ten_per_minute_for_the_four_endpoints(client, accounts, clock):
    a = await accounts.register("alice")
    calls = [
        lambda: client.post(LOGIN_OPTIONS, json={}),
        lambda: client.post(LOGIN_VERIFY, json=CEREMONY),
        lambda: client.post(REGISTER_OPTIONS, headers=a.headers),
        lambda: client.post(REGISTER_VERIFY, json=CEREMONY, headers=a.headers),
    ]
    for i in range(10):
        r = await calls[i % 4]()
        assert r.status_code != 429, r.text
    for call in calls:
        r = await call()
        assert_error(r, 429, "rate_limited")
        assert r.json()["error"]["bucket"] == "auth.passkey" and int(r.headers["retry-after"]) >= 1
    # Listing is not a ceremony.
    assert (await client.get(PASSKEYS, headers=a.headers)).status_code == 200
    clock.advance(60)
    await login_options(client)


class TestIpAddressDomain:
    @pytest.fixture
    def settings_overrides(self) -> dict[str, Any]:
        return {"DOMAIN": "192.0.2.10", "PUBLIC_URL": "http://192.0.2.10:8000"}

    async def test_ceremonies_are_refused(self, client, accounts):
        a = await accounts.register("alice")
        assert (await client.get("/api/v1/meta")).json()["features"]["passkeys_enabled"] is False
        for path, kw in ((LOGIN_OPTIONS, {"json": {}}), (LOGIN_VERIFY, {"json": CEREMONY}),
                         (REGISTER_OPTIONS, {"headers": a.headers}),
                         (REGISTER_VERIFY, {"json": CEREMONY, "headers": a.headers}),
                         (STEP_UP, {"json": CEREMONY, "headers": a.headers})):
            assert_error(await client.post(path, **kw), 403, "auth.passkey_unsupported")
        # Step-up by password still works.
        assert (await client.post(STEP_UP, json={"password": a["password"]}, headers=a.headers)).status_code == 200

    async def test_management_keeps_working(self, client, accounts, rt):
        a = await accounts.register("alice")
        async with rt.uow() as uow:
            await uow.conn.execute(insert(passkeys).values(
                id=uow.next_id(), user_id=int(a["user"]["id"]), credential_id="AAAA", public_key=b"k", sign_count=0,
                transports=[], backed_up=False, name="Old key", user_handle="BBBB", created_at=uow.now))
        listed = (await client.get(PASSKEYS, headers=a.headers)).json()["passkeys"]
        assert [p["name"] for p in listed] == ["Old key"]
        path = f"{PASSKEYS}/{listed[0]['id']}"
        assert (await client.patch(path, json={"name": "Renamed"}, headers=a.headers)).json()["passkey"]["name"] \
            == "Renamed"
        assert (await client.delete(path, headers=a.headers)).status_code == 204
        assert (await client.get(PASSKEYS, headers=a.headers)).json()["passkeys"] == []


@pytest.mark.parametrize("domain", ["::1", "[::1]", "10.0.0.1"])
def test_ip_domains_turn_passkeys_off(domain, tmp_path):
    assert Settings(DOMAIN=domain, SECRET_KEY="x" * 40, DATA_DIR=tmp_path).passkeys_enabled is False
    assert Settings(DOMAIN="chat.example.com", SECRET_KEY="x" * 40, DATA_DIR=tmp_path).passkeys_enabled is True
