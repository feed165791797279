async def test_create_guild_and_rooms(client, accounts, capture_events):
    a = await accounts.register("alice")
    r = await client.post("/api/v1/guilds", json={"name": "My Server"}, headers=a.headers)
    assert r.status_code == 201, r.text
    g = r.json()["guild"]
    r = await client.get(f"/api/v1/guilds/{g['id']}/channels", headers=a.headers)
    assert r.status_code == 200, r.text
    assert [c["name"] for c in r.json()["channels"]] == ["general"]
    r = await client.post(f"/api/v1/guilds/{g['id']}/channels", json={"name": "Voice", "type": "voice"}, headers=a.headers)
    assert r.status_code == 201, r.text
    r = await client.get("/api/v1/users/@me/guilds", headers=a.headers)
    assert len(r.json()["guilds"]) == 1
    await capture_events.settle()
    assert {e.type for e in capture_events} >= {"GUILD_CREATE", "CHANNEL_CREATE", "MESSAGE_CREATE"}
