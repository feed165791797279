async def test_healthz(client):
    r = await client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok"}


async def test_meta_shape_and_ratelimit_headers(client):
    r = await client.get("/api/v1/meta")
    assert r.status_code == 200
    body = r.json()
    assert body["version"] == "1.0.0"
    assert body["features"] == {
        "registration_enabled": True, "voice_enabled": False, "web_push_enabled": False, "unfurl_enabled": True,
        "passkeys_enabled": True,
    }
    assert "voice_url" not in body
    assert body["limits"]["message_length"] == 4000
    assert r.headers["X-RateLimit-Bucket"] == "global"
    assert r.headers["X-RateLimit-Limit"] == "1200"
