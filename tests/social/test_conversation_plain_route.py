"""The conversation list as a plain route (api/plain.py): tried before the documented FastAPI route, it
answers the same bytes and headers as that route, 401 without a session included."""

from __future__ import annotations

from starlette.routing import Route

from meadhall.api.plain import PlainRoute
from tests.support.conversations import group, open_dm, soft_delete
from tests.support.messages import post
from tests.support.plain import assert_same_answer

PATH = "/api/v1/users/@me/channels"


def test_the_list_is_a_plain_route_and_undocumented_as_such(app):
    plain = [r for r in app.router.routes if isinstance(r, PlainRoute) and r.path == PATH]
    assert len(plain) == 1 and plain[0].methods >= {"GET"}
    assert not any(isinstance(r, Route) and r.include_in_schema for r in plain)


async def test_the_plain_list_answers_the_documented_bytes(api, client, documented, accounts, rt):
    a, b, c, d = [await accounts.register(f"plain{i}", display_name=f"Plain {i}") for i in range(4)]
    one = await open_dm(api, a, b)
    await post(client, a, one["id"], "hello")
    await group(api, a, b, c, name="Three")
    await open_dm(api, a, d)
    await soft_delete(rt, d)
    for who in (a, b, c):
        plain = await client.get(PATH, headers=who.headers)
        assert plain.status_code == 200 and plain.json()["channels"]
        assert_same_answer(plain, await documented.get(PATH, headers=who.headers))
    # A deleted account's session no longer signs in: the same 401 either way.
    assert_same_answer(await client.get(PATH, headers=d.headers), await documented.get(PATH, headers=d.headers))


async def test_no_session_is_the_documented_401(client, documented):
    plain = await client.get(PATH)
    assert plain.status_code == 401 and plain.json()["error"]["code"] == "auth.unauthorized"
    assert plain.headers["X-RateLimit-Bucket"] == "global"
    assert_same_answer(plain, await documented.get(PATH))
