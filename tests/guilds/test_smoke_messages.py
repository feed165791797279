from tests.support.guilds import make_guild


async def test_send_and_list(client, accounts, capture_events):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    ch = g["system_channel_id"]
    r = await client.post(f"/api/v1/channels/{ch}/messages", json={"content": f"/me waves <@{a.id}>", "nonce": "n1"},
                          headers=a.headers)
    assert r.status_code == 201, r.text
    m = r.json()["message"]
    assert m["kind"] == "action" and m["content"] == f"waves <@{a.id}>"
    assert r.headers["X-RateLimit-Bucket"] == "messages.send"
    r2 = await client.post(f"/api/v1/channels/{ch}/messages", json={"content": "x", "nonce": "n1"}, headers=a.headers)
    assert r2.status_code == 200 and r2.json()["message"]["id"] == m["id"]
    r = await client.get(f"/api/v1/channels/{ch}/messages", headers=a.headers)
    assert r.status_code == 200, r.text
    assert [x["kind"] for x in r.json()["messages"]] == ["action", "system"]
    r = await client.patch(f"/api/v1/channels/{ch}/messages/{m['id']}", json={"content": "edited"}, headers=a.headers)
    assert r.status_code == 200 and r.json()["message"]["edited_at"]
    r = await client.delete(f"/api/v1/channels/{ch}/messages/{m['id']}", headers=a.headers)
    assert r.status_code == 204


async def test_typing_and_ack(client, accounts, capture_events):
    a = await accounts.register("alice")
    g = await make_guild(client, a)
    ch = g["system_channel_id"]
    assert (await client.post(f"/api/v1/channels/{ch}/typing", headers=a.headers)).status_code == 204
    assert (await client.post(f"/api/v1/channels/{ch}/typing", headers=a.headers)).status_code == 429
    r = await client.post(f"/api/v1/channels/{ch}/ack", headers=a.headers)
    assert r.status_code == 200, r.text
    assert r.json()["read_state"]["last_read_message_id"] is not None
    r = await client.get("/api/v1/users/@me/read-states", headers=a.headers)
    assert len(r.json()["read_states"]) == 1
