async def test_register_login_me(client, accounts):
    a = await accounts.register("alice")
    r = await client.get("/api/v1/users/@me", headers=a.headers)
    assert r.status_code == 200, r.text
    assert r.json()["user"]["username"] == "alice"
    r = await client.post("/api/v1/auth/login", json={"login": "ALICE", "password": a["password"]})
    assert r.status_code == 200, r.text
    assert r.json()["totp_enabled"] is False
    assert "__Host-session=" in r.headers["set-cookie"]
