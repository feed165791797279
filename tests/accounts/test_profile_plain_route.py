"""updateMe as a plain route (api/plain.py): tried before the documented FastAPI route, it answers the same
bytes and headers and emits the same events as that route; whatever is not a plain JSON object of the
documented shape is answered by the documented route itself."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.routing import Route

from meadhall.api.plain import PlainRoute
from tests.support.accounts import cookie
from tests.support.plain import assert_same_answer
from tests.support.social import befriend

ME = "/api/v1/users/@me"


def _dispatches(events: Any) -> list[tuple[str, dict[str, Any], tuple[int, ...]]]:
    return [(e.type, e.data, e.users) for e in events]


def test_update_me_is_a_plain_route_and_undocumented_as_such(app):
    plain = [r for r in app.router.routes if isinstance(r, PlainRoute) and r.path == ME]
    assert len(plain) == 1 and plain[0].methods >= {"PATCH"}
    assert not any(isinstance(r, Route) and r.include_in_schema for r in plain)


@pytest.mark.parametrize("body", [
    {"custom_status": "Out for lunch", "custom_status_emoji": "🍜"},
    {"status": "invisible"},
    {"display_name": "Zoë", "bio": "Hello"},
])
async def test_a_change_answers_and_announces_as_the_documented_route(api, client, documented, accounts,
                                                                     capture_events, body):
    a = await accounts.register("plainme")
    b = await accounts.register("plainfriend")
    await befriend(api, a, b)
    r = await client.post("/api/v1/guilds", json={"name": "Plain"}, headers=a.headers)
    assert r.status_code == 201, r.text
    before = (await client.get(ME, headers=a.headers)).json()["user"]
    undo = {k: before[k] for k in body}
    answers, announced = [], []
    for c in (client, documented):
        await capture_events.reset()
        answers.append(await c.patch(ME, json=body, headers=a.headers))
        await capture_events.settle()
        announced.append(_dispatches(capture_events))
        assert (await documented.patch(ME, json=undo, headers=a.headers)).status_code == 200
    assert answers[0].status_code == 200
    assert_same_answer(answers[0], answers[1])
    assert {t for t, _, _ in announced[0]} == {"USER_UPDATE", "MEMBER_UPDATE", "PRESENCE_UPDATE"}
    assert announced[0] == announced[1]


@pytest.mark.parametrize("kw", [
    {"json": {"status": "bogus"}},
    {"json": {"status": None}},
    {"json": ["not", "an", "object"]},
    {"content": b"{not json", "headers": {"content-type": "application/json"}},
    {"content": b'{"bio": "x"}', "headers": {"content-type": "text/plain"}},
])
async def test_what_is_not_plain_is_the_documented_answer(client, documented, accounts, kw):
    a = await accounts.register("plainbad")
    kw = {**kw, "headers": {**a.headers, **kw.get("headers", {})}}
    assert_same_answer(await client.patch(ME, **kw), await documented.patch(ME, **kw))


async def test_no_session_and_a_foreign_origin_are_the_documented_refusals(client, documented, accounts):
    a = await accounts.register("plainorigin")
    assert_same_answer(await client.patch(ME, json={"bio": "x"}), await documented.patch(ME, json={"bio": "x"}))
    foreign = {**cookie(a["token"]), "Origin": "http://evil.example"}
    plain = await client.patch(ME, json={"bio": "x"}, headers=foreign)
    assert plain.status_code == 403 and plain.json()["error"]["code"] == "auth.origin_mismatch"
    assert_same_answer(plain, await documented.patch(ME, json={"bio": "x"}, headers=foreign))
