"""GET /guilds/{id}/messages/search (OpenAPI: searchGuildMessages; docs/search.md), through HTTP, on SQLite and
PostgreSQL: every room of the server in which the caller holds VIEW_CHANNEL and READ_MESSAGE_HISTORY (overrides
applied), private messages only for their two parties, the `channel_id` and `author_id` filters, paging newest
first across rooms, and the refusals. The matching rules are those of the per-room search (test_search.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event as sa_event
from sqlalchemy import insert, text

from meadhall.core.ids import EPOCH_MS
from meadhall.core.text import norm
from meadhall.db.schema import messages
from tests.support.factories import add_member
from tests.support.guilds import make_guild, override, room
from tests.support.http import error_code

API = "/api/v1"
RELAXED = {"RATE_LIMITS": {"search": "1000/60", "messages.send": "1000/60"}}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return RELAXED


class Hall:
    """A guild owned by `owner` with members `a` and `b` (`outsider` is none) and rooms: `general` (made with
    the guild), `second`, `hidden` (no VIEW_CHANNEL for everyone but the owner), `no_history` (b lacks
    READ_MESSAGE_HISTORY there) and `voice` (a voice room's text)."""

    guild: dict[str, Any]
    rooms: dict[str, str]

    def __init__(self, owner: Any, a: Any, b: Any, outsider: Any) -> None:
        self.owner, self.a, self.b, self.outsider = owner, a, b, outsider


async def setup_hall(client: Any, accounts: Any, rt: Any) -> Hall:
    h = Hall(await accounts.register("owner"), await accounts.register("alice"), await accounts.register("bob"),
             await accounts.register("outsider"))
    h.guild = await make_guild(client, h.owner)
    gid = h.guild["id"]
    await add_member(rt, gid, h.a)
    await add_member(rt, gid, h.b)
    general = h.guild["system_channel_id"]
    second = (await room(client, h.owner, gid, name="second"))["id"]
    hidden = (await room(client, h.owner, gid, name="hidden"))["id"]
    await override(client, h.owner, hidden, gid, "role", deny="VIEW_CHANNEL")
    no_history = (await room(client, h.owner, gid, name="no-history"))["id"]
    await override(client, h.owner, no_history, h.b.id, "member", deny="READ_MESSAGE_HISTORY")
    voice = (await room(client, h.owner, gid, name="voice", type="voice"))["id"]
    h.rooms = {"general": general, "second": second, "hidden": hidden, "no_history": no_history, "voice": voice}
    return h


async def say(client: Any, account: Any, channel_id: str, content: str) -> dict[str, Any]:
    resp = await client.post(f"{API}/channels/{channel_id}/messages", json={"content": content},
                             headers=account.headers)
    assert resp.status_code == 201, resp.text
    return resp.json()["message"]


async def search(client: Any, account: Any, guild_id: str, q: str | None, **params: Any) -> Any:
    query = dict(params) if q is None else {"q": q, **params}
    return await client.get(f"{API}/guilds/{guild_id}/messages/search", params=query, headers=account.headers)


async def found(client: Any, account: Any, h: Hall, q: str, **params: Any) -> list[tuple[str, str]]:
    """(room name, content) of the user messages found, in the order answered."""
    resp = await search(client, account, h.guild["id"], q, **params)
    assert resp.status_code == 200, resp.text
    names = {v: k for k, v in h.rooms.items()}
    return [(names[m["channel_id"]], m["content"]) for m in resp.json()["messages"] if m["kind"] != "system"]


# ---- which rooms ----------------------------------------------------------------------------------------


async def test_every_room_the_caller_may_read_newest_first_across_rooms(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    for name in ("general", "second", "hidden", "no_history", "voice"):
        await say(client, h.owner, h.rooms[name], f"needle in {name}")
    await say(client, h.a, h.rooms["second"], "hay only")

    everything = [(n, f"needle in {n}") for n in ("voice", "no_history", "hidden", "second", "general")]
    assert await found(client, h.owner, h, "needle") == everything
    # Alice cannot see `hidden`; Bob neither, and he may not read the history of `no_history`.
    assert await found(client, h.a, h, "needle") == [x for x in everything if x[0] != "hidden"]
    assert await found(client, h.b, h, "needle") == [x for x in everything if x[0] not in ("hidden", "no_history")]
    assert await found(client, h.b, h, "ne") == await found(client, h.b, h, "needle")  # the short-word path alike


async def test_an_override_that_hides_a_room_hides_its_messages_at_once(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    await say(client, h.owner, h.rooms["second"], "secret plans")
    assert await found(client, h.a, h, "plans") == [("second", "secret plans")]
    await override(client, h.owner, h.rooms["second"], h.a.id, "member", deny="VIEW_CHANNEL")
    assert await found(client, h.a, h, "plans") == []
    await override(client, h.owner, h.rooms["second"], h.a.id, "member", allow="VIEW_CHANNEL",
                   deny="READ_MESSAGE_HISTORY")
    assert await found(client, h.a, h, "plans") == []
    await override(client, h.owner, h.rooms["hidden"], h.a.id, "member", allow="VIEW_CHANNEL")
    await say(client, h.owner, h.rooms["hidden"], "hidden plans")
    assert await found(client, h.a, h, "plans") == [("hidden", "hidden plans")]


async def test_private_messages_only_for_their_two_parties(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    await say(client, h.owner, h.rooms["general"], "public secret")
    await say(client, h.owner, h.rooms["second"], f"/ls <@{h.a.id}> private secret for alice")
    await say(client, h.a, h.rooms["general"], f"/ls <@{h.owner.id}> private secret from alice")

    both = [("general", "private secret from alice"), ("second", "private secret for alice"),
            ("general", "public secret")]
    assert await found(client, h.owner, h, "secret") == both
    assert await found(client, h.a, h, "secret") == both
    assert await found(client, h.b, h, "secret") == [("general", "public secret")]
    assert await found(client, h.b, h, "pr") == []
    assert (await search(client, h.b, h.guild["id"], "secret", limit=1)).json()["has_more"] is False


# ---- filters and paging ---------------------------------------------------------------------------------


async def test_channel_id_keeps_to_one_room_the_caller_may_search(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    for name in ("general", "second", "no_history"):
        await say(client, h.owner, h.rooms[name], f"topic of {name}")
    assert await found(client, h.b, h, "topic", channel_id=h.rooms["second"]) == [("second", "topic of second")]
    assert await found(client, h.a, h, "topic", channel_id=h.rooms["no_history"]) == [
        ("no_history", "topic of no_history")]

    other = await make_guild(client, h.b, "Elsewhere")
    elsewhere = other["system_channel_id"]
    for account, channel_id in ((h.b, h.rooms["hidden"]), (h.b, h.rooms["no_history"]), (h.a, "424242"),
                                (h.b, elsewhere)):
        resp = await search(client, account, h.guild["id"], "topic", channel_id=channel_id)
        assert resp.status_code == 404 and error_code(resp) == "channel.not_found", (account.id, channel_id)
    resp = await search(client, h.b, h.guild["id"], "topic", channel_id="abc")
    assert resp.status_code == 422 and error_code(resp) == "validation.failed"


async def test_author_id_keeps_to_one_author_and_an_unknown_one_finds_nothing(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    await say(client, h.a, h.rooms["general"], "report by alice")
    await say(client, h.b, h.rooms["second"], "report by bob")
    await say(client, h.a, h.rooms["second"], "another report by alice")

    assert await found(client, h.owner, h, "report", author_id=h.a.id) == [
        ("second", "another report by alice"), ("general", "report by alice")]
    assert await found(client, h.owner, h, "report", author_id=h.b.id, channel_id=h.rooms["general"]) == []
    assert await found(client, h.owner, h, "report", author_id=h.outsider.id) == []
    assert await found(client, h.owner, h, "report", author_id="424242") == []
    resp = await search(client, h.owner, h.guild["id"], "report", author_id="alice")
    assert resp.status_code == 422 and error_code(resp) == "validation.failed"


async def test_pages_newest_first_across_rooms_with_before_and_has_more(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    ids = [(await say(client, h.a, h.rooms[("general", "second", "voice")[i % 3]], f"page {i}"))["id"]
           for i in range(7)]
    newest_first = list(reversed(ids))
    for q in ("page", "pa"):  # through the index and through the short-word scan
        pages, before = [], None
        while True:
            params = {"limit": 3} if before is None else {"limit": 3, "before": before}
            body = (await search(client, h.b, h.guild["id"], q, **params)).json()
            pages.append(([m["id"] for m in body["messages"]], body["has_more"]))
            if not body["has_more"]:
                break
            before = body["messages"][-1]["id"]
        assert pages == [(newest_first[0:3], True), (newest_first[3:6], True), (newest_first[6:], False)], q


# ---- refusals -------------------------------------------------------------------------------------------


async def test_a_non_member_or_an_unknown_guild_404(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    await say(client, h.owner, h.rooms["general"], "members only")
    for account, guild_id in ((h.outsider, h.guild["id"]), (h.a, "424242"), (h.a, "nope")):
        resp = await search(client, account, guild_id, "members")
        assert resp.status_code == 404 and error_code(resp) == "guild.not_found", (account.id, guild_id)


async def test_bad_input_422(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    gid = h.guild["id"]
    for q in ("", "   ", "x" * 201, "a\x00b"):
        resp = await search(client, h.a, gid, q)
        assert resp.status_code == 422 and error_code(resp) == "validation.failed", repr(q)
    assert (await search(client, h.a, gid, None)).status_code == 422
    for params in ({"limit": 0}, {"limit": 101}, {"before": "abc"}):
        resp = await search(client, h.a, gid, "x", **params)
        assert resp.status_code == 422 and error_code(resp) == "validation.failed", params


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"search": "2/60"}}])
async def test_the_search_bucket_is_shared_with_the_room_search(client, accounts, rt, clock):
    h = await setup_hall(client, accounts, rt)
    assert (await search(client, h.a, h.guild["id"], "x")).status_code == 200
    resp = await client.get(f"{API}/channels/{h.rooms['general']}/messages/search", params={"q": "x"},
                            headers=h.a.headers)
    assert resp.status_code == 200
    resp = await search(client, h.a, h.guild["id"], "x")
    assert resp.status_code == 429 and error_code(resp) == "rate_limited"
    assert resp.json()["error"]["bucket"] == "search"
    clock.advance(60)
    assert (await search(client, h.a, h.guild["id"], "x")).status_code == 200


# ---- the index ------------------------------------------------------------------------------------------


async def seed(rt: Any, guild_id: str, channel_ids: list[str], author_id: str) -> None:
    """2,000 filler messages spread over the rooms, written directly."""
    base = int((datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000) - EPOCH_MS) << 22
    created = datetime(2026, 1, 1, tzinfo=UTC)
    async with rt.engine.begin() as conn:
        if conn.dialect.name == "sqlite":
            rows = []
            for i in range(2000):
                content = f"filler message number {i} about nothing much"
                rows.append({"id": base + i, "channel_id": int(channel_ids[i % len(channel_ids)]),
                             "guild_id": int(guild_id), "author_id": int(author_id), "content": content,
                             "content_norm": norm(content), "kind": "normal", "mentions": [], "mention_channels": [],
                             "mention_everyone": False, "suppress_embeds": False, "pinned": False,
                             "created_at": created})
            await conn.execute(insert(messages), rows)
            return
        await conn.execute(text(
            "INSERT INTO messages (id, channel_id, guild_id, author_id, content, content_norm, kind, mentions, "
            "mention_channels, mention_everyone, suppress_embeds, pinned, created_at) "
            "SELECT CAST(:base AS bigint) + g, (CAST(:rooms AS bigint[]))[1 + g % cardinality(CAST(:rooms AS bigint[]))], "
            "CAST(:guild AS bigint), CAST(:author AS bigint), "
            "'filler message number ' || g || ' about nothing much', 'filler message number ' || g || ' about nothing much', "
            "'normal', '[]', '[]', false, false, false, CAST(:created AS timestamptz) FROM generate_series(1, 2000) AS g"
        ), {"base": base, "rooms": [int(c) for c in channel_ids], "guild": int(guild_id), "author": int(author_id),
            "created": created})
    # VACUUM, not only ANALYZE: the planner prices a GIN index from the counts in its metapage, which only
    # VACUUM writes; left to autovacuum, the plan (trigram index or room index) would depend on its timing.
    async with rt.engine.connect() as conn:
        await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(text("VACUUM ANALYZE messages"))


async def test_the_search_uses_the_rooms_search_index_not_a_scan_of_all_messages(client, accounts, rt):
    h = await setup_hall(client, accounts, rt)
    await seed(rt, h.guild["id"], [h.rooms["general"], h.rooms["second"], h.rooms["voice"]], h.owner.id)
    await say(client, h.owner, h.rooms["second"], "a rare xylophone")
    statements: list[tuple[str, Any]] = []

    def on_execute(_conn, _cursor, statement, params, _ctx, _many):  # type: ignore[no-untyped-def]
        if "content_norm" in statement and statement.lstrip().upper().startswith("SELECT"):
            statements.append((statement, params))

    sa_event.listen(rt.engine.sync_engine, "before_cursor_execute", on_execute)
    try:
        assert await found(client, h.b, h, "xylophone") == [("second", "a rare xylophone")]
    finally:
        sa_event.remove(rt.engine.sync_engine, "before_cursor_execute", on_execute)
    assert len(statements) == 1
    statement, params = statements[0]
    async with rt.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            plan = " ".join(str(r[-1]) for r in await conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, params))
            # The FTS5 trigram table yields the matches; each is looked up by the room index, never a scan.
            assert "messages_search VIRTUAL TABLE" in plan and not re.search(r"SCAN messages(?!_search)", plan), plan
        else:
            # A table this small is cheaper to read whole than through any index: forbidding the sequential
            # scan shows which index the statement can use (on a large table the planner picks it itself).
            await conn.execute(text("SET plan_cache_mode = force_custom_plan"))
            await conn.execute(text("SET enable_seqscan = off"))
            plan = "\n".join(r[0] for r in await conn.exec_driver_sql("EXPLAIN " + statement, params))
            assert "ix_messages_content_norm_trgm" in plan and "Seq Scan" not in plan, plan
