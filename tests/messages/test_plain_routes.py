"""The plain routes of send and history (api/plain.py): they answer plain requests, and whatever they
decline is answered by the documented FastAPI routes exactly as before: validation errors naming the
field, 401 before 422, and no bucket token taken twice."""

from __future__ import annotations

import json

import pytest
from starlette.routing import Route

from meadhall.api.plain import PlainRoute
from tests.support.http import invalid
from tests.support.messages import url
from tests.support.personas import hall as make_hall

JSON = {"Content-Type": "application/json"}


@pytest.fixture
async def hall(client, accounts, rt):
    return await make_hall(client, accounts, rt)


@pytest.fixture
def settings_overrides():
    return {"RATE_LIMITS": {"messages.send": "3/60", "global": "1000/1"}}


def test_send_and_history_are_tried_first_and_documented(app):
    plain = [r for r in app.router.routes[:2]]
    assert all(isinstance(r, PlainRoute) for r in plain)
    assert {(r.path, m) for r in plain for m in r.methods if m != "HEAD"} == {
        ("/api/v1/channels/{channel_id}/messages", "POST"), ("/api/v1/channels/{channel_id}/messages", "GET")}
    assert not any(isinstance(r, Route) and r.include_in_schema for r in plain)


async def test_a_plain_send_and_page_answer_as_documented(client, hall):
    h = hall
    room = h.guild["system_channel_id"]
    r = await client.post(url(room), json={"content": "plain"}, headers=h.a.headers)
    assert r.status_code == 201 and r.headers["content-type"] == "application/json"
    assert r.headers["X-RateLimit-Bucket"] == "messages.send"
    message = r.json()["message"]
    assert message["content"] == "plain" and message["author"]["id"] == h.a.id
    r = await client.get(url(room), params={"limit": "1"}, headers=h.a.headers)
    assert r.status_code == 200
    assert r.json() == {"messages": [message], "has_more": True}


@pytest.mark.parametrize("body, headers, field", [
    (b'{"content": 5}', JSON, "content"),
    (b"{not json", JSON, "body"),
    (b'["a list"]', JSON, "body"),
    (b"", JSON, "body"),
    (json.dumps({"content": "x", "attachment_ids": "nope"}).encode(), JSON, "attachment_ids"),
])
async def test_bodies_the_plain_route_declines_get_the_documented_errors(client, hall, body, headers, field):
    h = hall
    r = await client.post(url(h.guild["system_channel_id"]), content=body, headers={**h.a.headers, **headers})
    invalid(r, field)


async def test_a_body_of_another_type_gets_the_documented_error(client, hall):
    h = hall
    r = await client.post(url(h.guild["system_channel_id"]), content=b"hello",
                          headers={**h.a.headers, "Content-Type": "text/plain"})
    assert r.status_code == 422, r.text


async def test_no_session_is_401(client, hall):
    room = hall.guild["system_channel_id"]
    r = await client.post(url(room), json={"content": "x"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "auth.unauthorized"
    assert r.headers["X-RateLimit-Bucket"] == "global"
    r = await client.get(url(room))
    assert r.status_code == 401 and r.json()["error"]["code"] == "auth.unauthorized"


async def test_a_declined_send_takes_one_token_not_two(client, hall):
    h = hall
    room = h.guild["system_channel_id"]
    invalid(await client.post(url(room), content=b'{"content": 5}', headers={**h.a.headers, **JSON}), "content")
    for _ in range(2):
        assert (await client.post(url(room), json={"content": "ok"}, headers=h.a.headers)).status_code == 201
    r = await client.post(url(room), json={"content": "over"}, headers=h.a.headers)
    assert r.status_code == 429 and r.json()["error"]["bucket"] == "messages.send"


@pytest.mark.parametrize("params, field", [
    ({"limit": "0"}, "limit"),
    ({"limit": "101"}, "limit"),
    ({"limit": "ten"}, "limit"),
    ({"limit": ""}, "limit"),
    ({"before": "x"}, "before"),
    ({"after": "-1"}, "after"),
    ({"before": "1", "after": "2"}, "before"),
])
async def test_queries_the_plain_route_declines_get_the_documented_errors(client, hall, params, field):
    h = hall
    invalid(await client.get(url(h.guild["system_channel_id"]), params=params, headers=h.a.headers), field)


async def test_other_methods_on_the_path_are_routed_as_before(client, hall):
    r = await client.put(url(hall.guild["system_channel_id"]), json={}, headers=hall.a.headers)
    assert r.status_code == 405 and r.json()["error"]["code"] == "request.method_not_allowed"


