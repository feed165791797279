"""The emoji path parameter (OpenAPI: addReaction): Unicode sequences, custom tokens, and the custom-emoji hook."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from meadhall.core.errors import AppError
from meadhall.db.schema import reactions
from meadhall.messages import emoji as emojis
from meadhall.messages.emoji import CustomEmoji, ParsedEmoji, is_unicode_emoji, parse_emoji
from tests.support.factories import add_member
from tests.support.guilds import make_guild
from tests.support.http import err
from tests.support.messages import message_of, post, react, reaction_url, unreact
from tests.support.personas import gathering

API = "/api/v1"

VALID = [
    "\U0001F44D",  # thumbs up
    "\U0001F44D\U0001F3FD",  # with a skin tone
    "\u2764\ufe0f",  # heart with presentation selector
    "\u2764",  # heart, text default
    "\u00a9\ufe0f", "\u00ae", "\u2122\ufe0f", "\u3030\ufe0f", "\u3297\ufe0f", "\u24c2\ufe0f",
    "\u2b50", "\u231a", "\u25b6\ufe0f", "\u2934\ufe0f", "\u2194\ufe0f", "\u203c\ufe0f", "\u2049\ufe0f",
    "#\ufe0f\u20e3", "7\ufe0f\u20e3", "*\u20e3",  # keycaps
    "\U0001F1FA\U0001F1E6",  # flag: Ukraine
    "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F",  # flag: England
    "\U0001F3F3\ufe0f\u200d\U0001F308",  # rainbow flag
    "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466",  # family
    "\U0001F9D1\U0001F3FD\u200d\U0001F91D\u200d\U0001F9D1\U0001F3FB",  # people holding hands, two tones
    "\U0001F469\U0001F3FE\u200d\u2764\ufe0f\u200d\U0001F48B\u200d\U0001F468\U0001F3FB",  # kiss
    "\U0001F441\ufe0f\u200d\U0001F5E8\ufe0f",  # eye in speech bubble
    "\U0001F3FB",  # a lone skin tone is an emoji too
    "\U0001FAE8",  # shaking face (Unicode 15)
]

INVALID = [
    "", "a", "ab", "hello", "1", "#", "12", "\u00e9", "\u0416", "\u4e2d", " ", "\U0001F44D ",
    "\U0001F44D\U0001F44D",  # two emojis, not one sequence
    "\ufe0f", "\u200d", "\u20e3", "\U000E0067",  # joiners and modifiers alone
    "\u200d\U0001F44D", "\U0001F44D\u200d", "\U0001F44D\u200d\u200d\U0001F44D",
    "\U0001F1FA",  # half a flag
    "\U0001F1FA\U0001F1E6\U0001F1FA",
    "1\ufe0f",  # keycap base without the keycap
    "\U0001F3F4\U000E0067\U000E0062",  # tag sequence without its cancel tag
    "\U0001F44D\ufe0f\ufe0f",
    "\U0001F468" + "\u200d\U0001F468" * 16,  # 33 code points
    "<:party:1>x", "party:1:2", "<party:1>",
]


@pytest.mark.parametrize("text", VALID)
def test_unicode_emojis_are_accepted(text):
    assert is_unicode_emoji(text)
    assert parse_emoji(text) == ParsedEmoji(unicode=text)


@pytest.mark.parametrize("text", INVALID)
def test_malformed_emojis_are_refused(text):
    assert not is_unicode_emoji(text)
    with pytest.raises(AppError) as err:
        parse_emoji(text)
    assert err.value.code == "reaction.invalid_emoji" and err.value.status == 422


def test_thirty_two_code_points_is_the_limit():
    family = "\U0001F468" + "\u200d\U0001F468" * 15  # 31 code points
    assert is_unicode_emoji(family)
    assert not is_unicode_emoji(family + "\u200d\U0001F468")  # 33


@pytest.mark.parametrize(("raw", "name", "emoji_id"), [
    ("<:party:123>", "party", 123), ("party:123", "party", 123), ("Big_Name_2:9", "Big_Name_2", 9),
    ("<:" + "x" * 32 + ":1>", "x" * 32, 1),
])
def test_custom_tokens_parse_to_an_id(raw, name, emoji_id):
    assert parse_emoji(raw) == ParsedEmoji(custom_id=emoji_id, custom_name=name)


@pytest.mark.parametrize("raw", [
    "<:p:1>", "p:1", "<:" + "x" * 33 + ":1>", "<:party:0>", "<:party:-1>", "<:par-ty:1>", "<:party:1",
    "party:1>", "<:party:12345678901234567890>", "<a:party:1>", ":party:1", "<:пати:1>",
])
def test_malformed_custom_tokens(raw):
    with pytest.raises(AppError) as err:
        parse_emoji(raw)
    assert err.value.code == "reaction.invalid_emoji"


def test_custom_token_form():
    assert CustomEmoji(id=42, guild_id=1, name="party").token == "<:party:42>"


async def test_find_custom_emoji_knows_none_yet(rt):
    async with rt.engine.connect() as conn:
        assert await emojis.find_custom_emoji(conn, 123) is None


# ---- the lookup hook: what the emoji issue plugs into ----------------------------------------------


@pytest.fixture
def known_emojis(monkeypatch):
    """Stand-in for the future `emojis` table: id -> CustomEmoji."""
    table: dict[int, CustomEmoji] = {}

    async def find(conn, emoji_id):
        return table.get(emoji_id)

    monkeypatch.setattr(emojis, "find_custom_emoji", find)
    return table


async def test_custom_emoji_of_the_guild_is_matched_by_id(client, accounts, rt, capture_events, known_emojis):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    known_emojis[555] = CustomEmoji(id=555, guild_id=int(guild["id"]), name="party")
    m = await post(client, a, ch)
    await capture_events.reset()
    await react(client, a, ch, m["id"], "party:555")
    await react(client, b, ch, m["id"], "<:whatever:555>")  # the name part is ignored
    await react(client, b, ch, m["id"], "<:party:555>")  # same reaction: idempotent
    await capture_events.settle()
    assert [e.data["emoji"] for e in capture_events.of_type("MESSAGE_REACTION_ADD")] == ["<:party:555>"] * 2
    assert (await message_of(client, b, ch, m["id"]))["reactions"] == [
        {"emoji": "<:party:555>", "count": 2, "me": True}]
    r = await client.get(reaction_url(ch, m["id"], "zz:555"), headers=a.headers)
    assert [u["id"] for u in r.json()["users"]] == sorted([a.id, b.id], key=int)
    # Renamed later: the existing reactions keep their key, new ones join them.
    known_emojis[555] = CustomEmoji(id=555, guild_id=int(guild["id"]), name="fiesta")
    await unreact(client, b, ch, m["id"], "fiesta:555")
    c = await accounts.register("carol")
    await add_member(rt, guild["id"], c)
    await react(client, c, ch, m["id"], "fiesta:555")
    async with rt.engine.connect() as conn:
        stored = sorted((await conn.execute(select(reactions.c.emoji))).scalars())
    assert stored == ["<:party:555>", "<:party:555>"]
    # Deleted later: it cannot be added any more, but the reactions it left can still be removed.
    del known_emojis[555]
    r = await react(client, b, ch, m["id"], "party:555", expect=422)
    assert err(r)["code"] == "reaction.invalid_emoji"
    await unreact(client, a, ch, m["id"], "party:555")
    r = await client.delete(reaction_url(ch, m["id"], "party:555", c.id), headers=a.headers)
    assert r.status_code == 204
    r = await unreact(client, a, ch, m["id"], "party:555", expect=422)  # nothing left, and unknown


async def test_external_custom_emoji_needs_permission_and_membership(client, accounts, rt, known_emojis):
    guild, ch, (a, b) = await gathering(client, accounts, rt, "bob")
    elsewhere = await make_guild(client, await accounts.register("erin"), "Elsewhere")
    known_emojis[777] = CustomEmoji(id=777, guild_id=int(elsewhere["id"]), name="far")
    m = await post(client, a, ch)
    r = await react(client, b, ch, m["id"], "far:777", expect=403)
    assert err(r)["code"] == "perm.denied" and err(r)["permission"] is None
    await add_member(rt, elsewhere["id"], b)
    await react(client, b, ch, m["id"], "far:777")
    r = await client.put(f"{API}/channels/{ch}/permissions/{guild['id']}",
                         json={"type": "role", "deny": "USE_EXTERNAL_EMOJIS"}, headers=a.headers)
    assert r.status_code == 204, r.text
    r = await react(client, b, ch, m["id"], "<:far:777>", expect=403)
    assert err(r)["permission"] == "USE_EXTERNAL_EMOJIS"
