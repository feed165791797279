"""GET /channels/{id}/messages/search (OpenAPI: searchMessages; docs/reference/limits.md), through HTTP, on SQLite and
PostgreSQL. Every word must occur in the message; the last one as a prefix, the others as whole words or
substrings; case-insensitive in every script; LIKE wildcards and FTS syntax in the query are plain text."""

from __future__ import annotations

from typing import Any

import pytest
from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import text

from meadhall.core.text import norm
from meadhall.db.migrations.frozen import message_search_0006
from tests.support.factories import add_member
from tests.support.guilds import make_guild, room
from tests.support.http import error_code

API = "/api/v1"
# Most tests search more often than the `search` bucket allows (10 per minute), and post more than the
# send burst; the limit itself is tested with its real shape below.
RELAXED = {"RATE_LIMITS": {"search": "1000/60", "messages.send": "1000/60"}}


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return RELAXED


# ---- helpers ------------------------------------------------------------------------------------------


class Room:
    """A fresh text room of a guild owned by `owner`, with members `a` and `b`; `outsider` is no member."""

    def __init__(self, guild: dict[str, Any], channel_id: str, owner: Any, a: Any, b: Any, outsider: Any) -> None:
        self.guild, self.id = guild, channel_id
        self.owner, self.a, self.b, self.outsider = owner, a, b, outsider
        self.posted: list[dict[str, Any]] = []  # oldest first


async def setup_room(client: Any, accounts: Any, rt: Any) -> Room:
    owner, a, b = await accounts.register("owner"), await accounts.register("alice"), await accounts.register("bob")
    outsider = await accounts.register("outsider")
    guild = await make_guild(client, owner)
    await add_member(rt, guild["id"], a)
    await add_member(rt, guild["id"], b)
    channel = await room(client, owner, guild["id"], name="search")
    return Room(guild, channel["id"], owner, a, b, outsider)


async def say(client: Any, r: Room, content: str, account: Any = None) -> dict[str, Any]:
    resp = await client.post(f"{API}/channels/{r.id}/messages", json={"content": content},
                             headers=(account or r.owner).headers)
    assert resp.status_code == 201, resp.text
    message = resp.json()["message"]
    r.posted.append(message)
    return message


async def search(client: Any, account: Any, channel_id: str, q: str | None, **params: Any) -> Any:
    query = dict(params) if q is None else {"q": q, **params}
    return await client.get(f"{API}/channels/{channel_id}/messages/search", params=query, headers=account.headers)


async def found(client: Any, account: Any, r: Room, q: str, **params: Any) -> list[str]:
    """Contents of the user messages found, in the order answered (system messages left out)."""
    resp = await search(client, account, r.id, q, **params)
    assert resp.status_code == 200, resp.text
    return [m["content"] for m in resp.json()["messages"] if m["kind"] != "system"]


def expected(r: Room, q: str) -> list[str]:
    """The rule itself: every word of the normalised query occurs in the normalised text; newest first."""
    words = norm(q).split()
    return [m["content"] for m in reversed(r.posted) if all(w in norm(m["content"]) for w in words)]


# ---- matching -----------------------------------------------------------------------------------------


async def test_last_word_is_a_prefix_substrings_match_and_all_words_must(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    for content in ("hello world", "help me", "seashell script", "world peace", "other text"):
        await say(client, r, content)

    assert await found(client, r.a, r, "hel") == ["seashell script", "help me", "hello world"]
    assert await found(client, r.a, r, "orl") == ["world peace", "hello world"]
    assert await found(client, r.a, r, "hello world") == ["hello world"]
    assert await found(client, r.a, r, "world hel") == ["hello world"]  # word order does not matter
    assert await found(client, r.a, r, "wor hello") == ["hello world"]  # earlier words match as substrings
    assert await found(client, r.a, r, "hello me") == []  # AND, not OR
    assert await found(client, r.a, r, "world world") == ["world peace", "hello world"]
    # Words shorter than three characters (below the trigram indexes) follow the same rule.
    assert await found(client, r.a, r, "he") == ["other text", "seashell script", "help me", "hello world"]
    assert await found(client, r.a, r, "lo w") == ["hello world"]
    assert await found(client, r.a, r, "hello w") == ["hello world"]
    assert await found(client, r.a, r, "e t") == ["other text", "seashell script"]
    for q in ("x", "ld", "pea", "script", "zzz", "o r", "el he", "ther tex"):
        assert await found(client, r.a, r, q) == expected(r, q), q
    # System messages are searchable like others ("owner created this room.").
    resp = await search(client, r.a, r.id, "created this")
    assert [m["kind"] for m in resp.json()["messages"]] == ["system"]


async def test_case_insensitive_in_every_script(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    for content in ("привет мир", "Ёлка горит", "ёлка в лесу", "Καλημέρα κόσμε", "ΚΌΣΜΟΣ", "Straße",
                    "HeLLo MiXeD", "ＦＵＬＬＷＩＤＴＨ", "日本語のテキスト", "emoji 🎉 party"):
        await say(client, r, content)

    assert await found(client, r.a, r, "ПРИВЕТ") == ["привет мир"]
    assert await found(client, r.a, r, "Привет МИ") == ["привет мир"]
    assert await found(client, r.a, r, "ивет") == ["привет мир"]
    assert await found(client, r.a, r, "Ёлка") == ["ёлка в лесу", "Ёлка горит"]
    assert await found(client, r.a, r, "ЁЛК") == ["ёлка в лесу", "Ёлка горит"]
    assert await found(client, r.a, r, "ёлка горит") == ["Ёлка горит"]
    assert await found(client, r.a, r, "елка") == []  # Е and Ё are different letters
    assert await found(client, r.a, r, "ΚΑΛΗΜΈΡΑ") == ["Καλημέρα κόσμε"]
    # Casefolding, not lowercasing: the final sigma and ß match their folded forms.
    assert await found(client, r.a, r, "κόσμος") == ["ΚΌΣΜΟΣ"]
    assert await found(client, r.a, r, "κόσμ") == ["ΚΌΣΜΟΣ", "Καλημέρα κόσμε"]
    assert await found(client, r.a, r, "STRASSE") == ["Straße"]
    assert await found(client, r.a, r, "mixed hello") == ["HeLLo MiXeD"]
    assert await found(client, r.a, r, "fullwidth") == ["ＦＵＬＬＷＩＤＴＨ"]  # NFKC
    assert await found(client, r.a, r, "テキスト") == ["日本語のテキスト"]
    assert await found(client, r.a, r, "本語") == ["日本語のテキスト"]
    assert await found(client, r.a, r, "🎉") == ["emoji 🎉 party"]


async def test_like_wildcards_are_literal(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    for content in ("50% off", "500 off", "a_b", "axb", r"back\slash", "back-slash", "100%_sure", "plain"):
        await say(client, r, content)

    assert await found(client, r.a, r, "50%") == ["50% off"]
    assert await found(client, r.a, r, "0%") == ["100%_sure", "50% off"]
    assert await found(client, r.a, r, "a_b") == ["a_b"]
    assert await found(client, r.a, r, "%") == ["100%_sure", "50% off"]
    assert await found(client, r.a, r, "_") == ["100%_sure", "a_b"]
    assert await found(client, r.a, r, "%_") == ["100%_sure"]
    assert await found(client, r.a, r, "\\") == [r"back\slash"]
    assert await found(client, r.a, r, r"k\s") == [r"back\slash"]
    assert await found(client, r.a, r, r"\%") == []
    for q in ("%%", "_b", "a%b", "5_0", "[a]", "off 50%"):
        assert await found(client, r.a, r, q) == expected(r, q), q


async def test_quotes_and_full_text_syntax_are_literal(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    for content in ('say "NOT" now', "nothing here", "foo* bar", "food court", "(paren)", "NEAR the end",
                    "x AND y", "col:on", "^caret", "minus -sign", "it's fine", 'a "quoted" word', "plain words"):
        await say(client, r, content)

    assert await found(client, r.a, r, '"') == ['a "quoted" word', 'say "NOT" now']
    assert await found(client, r.a, r, '"not"') == ['say "NOT" now']
    assert await found(client, r.a, r, "foo*") == ["foo* bar"]
    assert await found(client, r.a, r, "*") == ["foo* bar"]
    assert await found(client, r.a, r, "(") == ["(paren)"]
    assert await found(client, r.a, r, "NOT") == ["nothing here", 'say "NOT" now']
    assert await found(client, r.a, r, "NEAR") == ["NEAR the end"]
    assert await found(client, r.a, r, "NEAR(") == []
    assert await found(client, r.a, r, "x OR y") == []  # OR is a word like any other
    assert await found(client, r.a, r, "x AND y") == ["x AND y"]
    assert await found(client, r.a, r, "NOT foo") == []
    assert await found(client, r.a, r, "-sign") == ["minus -sign"]
    assert await found(client, r.a, r, "col:on") == ["col:on"]
    assert await found(client, r.a, r, "it's") == ["it's fine"]
    assert await found(client, r.a, r, "'") == ["it's fine"]
    for q in ('""', '"quoted', "^", ":", ":*", "'foo':*", "foo:*", "a & b", "!", "|", "{", "+", "~", "<->",
              "NEAR(foo bar)", "col:", "^car", "foo OR", '"NOT" now', "-", "* bar", "AND", "OR NOT"):
        assert await found(client, r.a, r, q) == expected(r, q), q


# ---- visibility ---------------------------------------------------------------------------------------


async def test_private_messages_only_for_their_two_parties(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    await say(client, r, "public secret")
    await say(client, r, f"/ls <@{r.a.id}> private secret for alice")
    await say(client, r, f"/ls <@{r.owner.id}> private secret from alice", account=r.a)

    both = ["private secret from alice", "private secret for alice", "public secret"]
    assert await found(client, r.owner, r, "secret") == both
    assert await found(client, r.a, r, "secret") == both
    assert await found(client, r.b, r, "secret") == ["public secret"]
    assert await found(client, r.b, r, "private") == []
    assert await found(client, r.b, r, "pr") == []  # the scan for short words filters alike
    resp = await search(client, r.b, r.id, "secret", limit=1)
    assert resp.json()["has_more"] is False


async def test_without_read_message_history_403(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    await say(client, r, "history")
    resp = await client.put(f"{API}/channels/{r.id}/permissions/{r.b.id}",
                            json={"type": "member", "deny": "READ_MESSAGE_HISTORY"}, headers=r.owner.headers)
    assert resp.status_code == 204, resp.text

    resp = await search(client, r.b, r.id, "history")
    assert resp.status_code == 403 and error_code(resp) == "perm.denied"
    assert resp.json()["error"]["permission"] == "READ_MESSAGE_HISTORY"
    assert await found(client, r.a, r, "history") == ["history"]


async def test_unseen_or_unknown_room_404(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    hidden = await room(client, r.owner, r.guild["id"], name="hidden",
                        permission_overrides=[{"id": r.guild["id"], "type": "role", "deny": "VIEW_CHANNEL"}])
    for account, channel_id in ((r.b, hidden["id"]), (r.outsider, r.id), (r.a, "424242"), (r.a, "nope")):
        resp = await search(client, account, channel_id, "x")
        assert resp.status_code == 404 and error_code(resp) == "channel.not_found", (account.id, channel_id)
    assert (await search(client, r.owner, hidden["id"], "x")).status_code == 200


async def test_search_is_a_route_not_a_message_id(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    message = await say(client, r, "findable")
    resp = await search(client, r.a, r.id, None)  # no `q`: the search route answers, not message.not_found
    assert resp.status_code == 422 and error_code(resp) == "validation.failed"
    resp = await client.get(f"{API}/channels/{r.id}/messages/{message['id']}", headers=r.a.headers)
    assert resp.status_code == 200 and resp.json()["message"]["content"] == "findable"


# ---- query parameters ---------------------------------------------------------------------------------


async def test_query_length_and_parameters_are_validated(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    await say(client, r, "x" * 200)
    for q, field in (("", "q"), ("   ", "q"), ("\t\n", "q"), ("x" * 201, "q"), ("a\x00b", "q")):
        resp = await search(client, r.a, r.id, q)
        assert resp.status_code == 422 and error_code(resp) == "validation.failed", repr(q)
        assert resp.json()["error"]["details"][0]["field"] == field
    # 200 characters after trimming are allowed.
    assert await found(client, r.a, r, "  " + "x" * 200 + "  ") == ["x" * 200]
    for params in ({"limit": 0}, {"limit": 101}, {"before": "abc"}, {"before": "-1"}):
        resp = await search(client, r.a, r.id, "x", **params)
        assert resp.status_code == 422 and error_code(resp) == "validation.failed", params


async def test_newest_first_with_before_paging_and_has_more(client, accounts, rt):
    r = await setup_room(client, accounts, rt)
    ids = [(await say(client, r, f"needle {i}"))["id"] for i in range(7)]
    await say(client, r, "hay")
    newest_first = list(reversed(ids))

    for q in ("needle", "dl"):  # through the index and through the short-word scan
        pages, before = [], None
        while True:
            params = {"limit": 3} if before is None else {"limit": 3, "before": before}
            resp = await search(client, r.a, r.id, q, **params)
            assert resp.status_code == 200, resp.text
            body = resp.json()
            pages.append(([m["id"] for m in body["messages"]], body["has_more"]))
            if not body["has_more"]:
                break
            before = body["messages"][-1]["id"]
        assert pages == [(newest_first[0:3], True), (newest_first[3:6], True), (newest_first[6:], False)], q
    resp = await search(client, r.a, r.id, "needle", before=ids[0])
    assert resp.json() == {"messages": [], "has_more": False}
    resp = await search(client, r.a, r.id, "needle")
    assert [m["id"] for m in resp.json()["messages"]] == newest_first and resp.json()["has_more"] is False


@pytest.mark.parametrize("settings_overrides", [{"RATE_LIMITS": {"search": "2/60"}}])
async def test_search_bucket_429(client, accounts, rt, clock):
    r = await setup_room(client, accounts, rt)
    for _ in range(2):
        assert (await search(client, r.a, r.id, "x")).status_code == 200
    resp = await search(client, r.a, r.id, "x")
    assert resp.status_code == 429 and error_code(resp) == "rate_limited"
    assert resp.json()["error"]["bucket"] == "search" and "Retry-After" in resp.headers
    assert (await search(client, r.b, r.id, "x")).status_code == 200  # per user
    clock.advance(60)
    assert (await search(client, r.a, r.id, "x")).status_code == 200


async def test_search_runs_as_many_queries_as_listing_plus_one(client, accounts, rt, assert_query_count):
    r = await setup_room(client, accounts, rt)
    for i in range(30):
        await say(client, r, f"count {i}", account=(r.a, r.b, r.owner)[i % 3])
    # Warms the session and permission caches, not the page below (history pages are cached by room
    # version; a search never is): the listing measured is one built from the database.
    resp = await client.get(f"{API}/channels/{r.id}/messages", params={"limit": 29}, headers=r.a.headers)
    with assert_query_count(100) as listing:
        resp = await client.get(f"{API}/channels/{r.id}/messages", params={"limit": 30}, headers=r.a.headers)
        assert len(resp.json()["messages"]) == 30
    # The same session, room and page work as listing; the search itself is one statement (plus SET LOCAL
    # on PostgreSQL), whatever the number of matches or words.
    for q in ("count", "co", "count 1", "c o u n t"):
        with assert_query_count(len(listing) + 1):
            assert len(await found(client, r.a, r, q)) == len(expected(r, q)), q


# ---- the index follows the messages -------------------------------------------------------------------


async def test_edited_messages_are_found_by_new_text_and_deleted_ones_vanish(client, accounts, rt, backend):
    r = await setup_room(client, accounts, rt)
    first = await say(client, r, "original wording")
    await say(client, r, "unrelated")
    resp = await client.patch(f"{API}/channels/{r.id}/messages/{first['id']}", json={"content": "Revised Text"},
                              headers=r.owner.headers)
    assert resp.status_code == 200, resp.text

    assert await found(client, r.a, r, "original") == []
    assert await found(client, r.a, r, "wording") == []
    assert await found(client, r.a, r, "revised text") == ["Revised Text"]
    assert await found(client, r.a, r, "ised") == ["Revised Text"]

    resp = await client.delete(f"{API}/channels/{r.id}/messages/{first['id']}", headers=r.owner.headers)
    assert resp.status_code == 204
    assert await found(client, r.a, r, "revised") == []
    assert await found(client, r.a, r, "ev") == []
    # A deleted room takes its messages (and their index entries) with it.
    assert (await client.delete(f"{API}/channels/{r.id}", headers=r.owner.headers)).status_code == 204
    if backend == "sqlite":
        async with rt.engine.begin() as conn:  # raises when the FTS5 index disagrees with messages
            await conn.execute(text("INSERT INTO messages_search(messages_search) VALUES ('integrity-check')"))


async def test_search_objects_index_existing_messages_and_tolerate_existing_ones(client, accounts, rt):
    """What migration 0006 does, on a database that has messages already, and again over itself."""
    r = await setup_room(client, accounts, rt)
    await say(client, r, "written before the index existed")

    def with_op(action: Any) -> Any:
        def run(sync_conn: Any) -> None:
            action(Operations(MigrationContext.configure(sync_conn)))
        return run

    async with rt.engine.begin() as conn:
        await conn.run_sync(with_op(message_search_0006.drop_message_search))
    try:
        await say(client, r, "written while there was no index")
    finally:
        async with rt.engine.begin() as conn:
            await conn.run_sync(with_op(message_search_0006.create_message_search))
    async with rt.engine.begin() as conn:
        await conn.run_sync(with_op(message_search_0006.create_message_search))  # objects exist: nothing breaks
    await say(client, r, "written after")

    assert await found(client, r.a, r, "before the ind") == ["written before the index existed"]
    assert await found(client, r.a, r, "written") == ["written after", "written while there was no index",
                                                     "written before the index existed"]
    assert await found(client, r.a, r, "no") == ["written while there was no index"]


async def test_long_words_are_found_whole_not_by_the_trigrams_that_cover_them(client, accounts, rt):
    # A word of nine characters or more is looked up by the trigrams that cover it (ryg, ris, try, yng) and
    # checked whole: a message holding those trigrams elsewhere is not found.
    r = await setup_room(client, accounts, rt)
    for content in ("a rygristryng here", "ryg and ristryng", "tryng ris ryg yng", "RYGRISTRYNG shouted",
                    "xrygristryngx inside", "Ёлкапалкамоя длинное", "ёлкапалка", "日本語のテキストです"):
        await say(client, r, content)
    assert await found(client, r.a, r, "rygristryng") == ["xrygristryngx inside", "RYGRISTRYNG shouted",
                                                          "a rygristryng here"]
    assert await found(client, r.a, r, "ristryng ryg") == ["xrygristryngx inside", "RYGRISTRYNG shouted",
                                                           "ryg and ristryng", "a rygristryng here"]
    for q in ("rygristryng", "rygristryngx", "ёлкапалкамоя", "ЁЛКАПАЛКА", "語のテキストで", "ristryng ryg",
              "rygristryn here", "gristryng"):
        assert await found(client, r.a, r, q) == expected(r, q), q
