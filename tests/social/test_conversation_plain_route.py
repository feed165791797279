"""The conversation list as a plain route (api/plain.py): tried before the documented FastAPI route, it
answers the same bytes and headers as that route, 401 without a session included."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.routing import Route

from meadhall.api.plain import DECLINED, PlainRoute
from tests.support.conversations import group, open_dm, soft_delete
from tests.support.messages import post

PATH = "/api/v1/users/@me/channels"


@pytest.fixture
async def documented(app: Any) -> Any:
    """A client whose requests skip the plain routes, as if they had declined: the FastAPI route answers."""

    async def skip_plain(scope: Any, receive: Any, send: Any) -> None:
        await app({**scope, DECLINED: True}, receive, send)

    transport = httpx.ASGITransport(app=skip_plain, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
        yield c


def _same(plain: httpx.Response, fastapi: httpx.Response) -> None:
    assert plain.status_code == fastapi.status_code
    assert plain.content == fastapi.content
    skip = {"x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-reset-after"}
    assert ({k: v for k, v in plain.headers.items() if k not in skip}
            == {k: v for k, v in fastapi.headers.items() if k not in skip})


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
        _same(plain, await documented.get(PATH, headers=who.headers))
    # A deleted account's session no longer signs in: the same 401 either way.
    _same(await client.get(PATH, headers=d.headers), await documented.get(PATH, headers=d.headers))


async def test_no_session_is_the_documented_401(client, documented):
    plain = await client.get(PATH)
    assert plain.status_code == 401 and plain.json()["error"]["code"] == "auth.unauthorized"
    assert plain.headers["X-RateLimit-Bucket"] == "global"
    _same(plain, await documented.get(PATH))
