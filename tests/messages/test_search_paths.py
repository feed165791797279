"""GET /channels/{id}/messages/search on PostgreSQL reads a room in up to three steps (db/dialect/search.py,
docs/search.md "Cost"): the room's newest messages (the probe), a walk on below them when the probe's matches
say the words are common enough, and the planner's statement below the last row read. Whichever steps a
query takes, the answer is the rule's: every match, newest first, pages by `before`, `has_more`, private
messages only for their two parties. The steps' sizes are shrunk here so that a small room takes each of
them; on SQLite (one statement) the same answers are checked."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event as sa_event

from meadhall.core.text import norm
from meadhall.db.dialect import search as dialect_search
from tests.support.factories import add_member
from tests.support.guilds import make_guild, room

API = "/api/v1"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"RATE_LIMITS": {"search": "1000/60", "messages.send": "1000/60"}}


class Room:
    def __init__(self, channel_id: str, owner: Any, a: Any, b: Any) -> None:
        self.id, self.owner, self.a, self.b = channel_id, owner, a, b
        self.posted: list[dict[str, Any]] = []  # oldest first


async def setup_room(client: Any, accounts: Any, rt: Any) -> Room:
    owner, a, b = await accounts.register("owner"), await accounts.register("alice"), await accounts.register("bob")
    guild = await make_guild(client, owner)
    await add_member(rt, guild["id"], a)
    await add_member(rt, guild["id"], b)
    return Room((await room(client, owner, guild["id"], name="search"))["id"], owner, a, b)


async def say(client: Any, r: Room, content: str, account: Any) -> None:
    resp = await client.post(f"{API}/channels/{r.id}/messages", json={"content": content}, headers=account.headers)
    assert resp.status_code == 201, resp.text
    r.posted.append(resp.json()["message"])


async def search(client: Any, account: Any, channel_id: str, q: str, **params: Any) -> Any:
    return await client.get(f"{API}/channels/{channel_id}/messages/search", params={"q": q, **params},
                            headers=account.headers)


def content(i: int) -> str:
    """Message i of 96, oldest first: `often` in every second one, `sometimes` in every sixth, `seldom` in
    two old ones, `burst` in two of the newest and two old ones."""
    words = [f"message {i}"]
    words += ["often"] if i % 2 == 0 else []
    words += ["sometimes"] if i % 6 == 0 else []
    words += ["seldom"] if i in (5, 50) else []
    words += ["burst"] if i in (3, 10, 93, 95) else []
    return " ".join(words)


async def fill(client: Any, r: Room) -> None:
    """The 96 messages; 10 and 78 are private, from the owner to `a` (`b` does not see them)."""
    for i in range(96):
        if i in (10, 78):
            await say(client, r, f"/ls <@{r.a.id}> {content(i)}", account=r.owner)
        else:
            await say(client, r, content(i), account=r.b)


def expected(r: Room, viewer: Any, q: str) -> list[str]:
    words = norm(q).split()
    return [m["id"] for m in reversed(r.posted) if all(w in norm(m["content"]) for w in words)
            and (m["kind"] != "private" or viewer.id in (m["author"]["id"], m["recipient_id"]))]


async def pages(client: Any, viewer: Any, r: Room, q: str, limit: int) -> list[tuple[list[str], bool]]:
    """Every page of the search, following `before`."""
    out: list[tuple[list[str], bool]] = []
    before = None
    while True:
        params = {"limit": limit} if before is None else {"limit": limit, "before": before}
        resp = await search(client, viewer, r.id, q, **params)
        assert resp.status_code == 200, resp.text
        body = resp.json()
        out.append(([m["id"] for m in body["messages"]], body["has_more"]))
        if not body["has_more"]:
            return out
        before = body["messages"][-1]["id"]


def paged(ids: list[str], limit: int) -> list[tuple[list[str], bool]]:
    chunks = [ids[at:at + limit] for at in range(0, len(ids), limit)] or [[]]
    return [(chunk, at < len(chunks) - 1) for at, chunk in enumerate(chunks)]


async def test_probe_walk_and_index_answer_alike(client, accounts, rt, monkeypatch):
    # A probe of 8 messages, and a walk of at most 24: with pages of 3 (4 rows asked), `often` fills the
    # page in the probe, `sometimes` (1 in the probe: 24 rows to walk) walks on, `seldom` (none) goes to the
    # index, and `burst` (2 in the probe) walks 24 rows in vain, then goes to the index.
    monkeypatch.setattr(dialect_search, "PROBE", 8)
    monkeypatch.setattr(dialect_search, "WALK_AT_MOST", 24)
    monkeypatch.setattr(dialect_search, "WALK_ROW_COST", 0)  # whatever the table's size: the walk is cheaper
    r = await setup_room(client, accounts, rt)
    await fill(client, r)
    statements: list[str] = []

    def on_execute(_conn, _cursor, statement, _params, _ctx, _many):  # type: ignore[no-untyped-def]
        if "content_norm" in statement and statement.lstrip().upper().startswith("SELECT"):
            statements.append("walk" if "row_number" in statement else "index")

    steps: dict[tuple[str, str], list[str]] = {}
    sa_event.listen(rt.engine.sync_engine, "before_cursor_execute", on_execute)
    try:
        for viewer, name in ((r.owner, "owner"), (r.b, "b")):
            for q in ("often", "sometimes", "seldom", "burst", "Often Sometimes", "mes", "of", "nothing"):
                for limit in (3, 5, 100):
                    want = expected(r, viewer, q)
                    assert await pages(client, viewer, r, q, limit) == paged(want, limit), (name, q, limit)
                statements.clear()
                await search(client, viewer, r.id, q, limit=3)
                steps[name, q] = list(statements)
    finally:
        sa_event.remove(rt.engine.sync_engine, "before_cursor_execute", on_execute)
    assert expected(r, r.b, "sometimes") != expected(r, r.owner, "sometimes")  # the walk skips 78 for b
    if rt.engine.dialect.name == "postgresql":
        for name in ("owner", "b"):
            assert steps[name, "often"] == ["walk"]
            assert steps[name, "sometimes"] == ["walk", "walk"]
            assert steps[name, "seldom"] == ["walk", "index"]
            assert steps[name, "burst"] == ["walk", "walk", "index"]


async def test_a_room_smaller_than_the_probe_is_one_statement(client, accounts, rt, monkeypatch):
    monkeypatch.setattr(dialect_search, "PROBE", 200)
    r = await setup_room(client, accounts, rt)
    await fill(client, r)
    statements: list[str] = []

    def on_execute(_conn, _cursor, statement, _params, _ctx, _many):  # type: ignore[no-untyped-def]
        if "content_norm" in statement and statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    sa_event.listen(rt.engine.sync_engine, "before_cursor_execute", on_execute)
    try:
        for q in ("seldom", "burst", "nothing", "often"):
            statements.clear()
            want = expected(r, r.owner, q)
            assert await pages(client, r.owner, r, q, 100) == paged(want, 100), q
            assert len(statements) == 1, q
    finally:
        sa_event.remove(rt.engine.sync_engine, "before_cursor_execute", on_execute)
