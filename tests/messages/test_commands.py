"""Slash commands on send (OpenAPI: sendMessage), through HTTP."""

from __future__ import annotations

from meadhall.core import permissions as perms
from tests.support.factories import message_count, update_default_permissions
from tests.support.guilds import override
from tests.support.http import denied, invalid
from tests.support.messages import post, send
from tests.support.personas import hall

P = perms.P


async def test_me_whisper_scream_store_kind_and_stripped_text(client, accounts, rt):
    h = await hall(client, accounts, rt)
    for content, kind, stored in [
        ("/me waves", "action", "waves"),
        ("/me\nwaves on a new line", "action", "waves on a new line"),
        ("/me  two spaces", "action", " two spaces"),
        ("/whisper psst", "whisper", "psst"),
        ("/scream HELLO", "scream", "HELLO"),
        ("/scream\nHELLO", "scream", "HELLO"),
    ]:
        m = await post(client, h.a, h.general, content)
        assert (m["kind"], m["content"]) == (kind, stored), content
        assert m["recipient_id"] is None


async def test_escapes_unknown_commands_and_case(client, accounts, rt, clock):
    h = await hall(client, accounts, rt)
    for content, stored in [
        ("//x", "/x"),
        ("//me waves", "/me waves"),
        ("///triple", "//triple"),
        ("/foo bar", "/foo bar"),
        ("/ME x", "/ME x"),
        ("/Me x", "/Me x"),
        ("/mewaves", "/mewaves"),
        ("/me\twaves", "/me\twaves"),
        (" /me waves", " /me waves"),
        ("/", "/"),
        ("//", "/"),
        ("/lsx <@1> hi", "/lsx <@1> hi"),
    ]:
        clock.advance(1)  # more messages than one burst of the send bucket
        m = await post(client, h.a, h.general, content)
        assert (m["kind"], m["content"]) == ("normal", stored), content


async def test_command_without_text_is_422(client, accounts, rt):
    h = await hall(client, accounts, rt)
    before = await message_count(rt, h.general)
    for content in ("/me", "/me ", "/me   ", "/me \n ", "/whisper", "/scream "):
        invalid(await send(client, h.a, h.general, content), "content")
    assert await message_count(rt, h.general) == before


async def test_length_counts_the_request_content_before_stripping(client, accounts, rt):
    h = await hall(client, accounts, rt)
    assert (await post(client, h.a, h.general, "/me " + "x" * 3996))["content"] == "x" * 3996
    invalid(await send(client, h.a, h.general, "/me " + "x" * 3997), "content")
    invalid(await send(client, h.a, h.general, "//" + "x" * 3999), "content")


async def test_scream_needs_send_screams(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await update_default_permissions(rt, h.id, perms.DEFAULT & ~P.SEND_SCREAMS)
    before = await message_count(rt, h.general)
    denied(await send(client, h.a, h.general, "/scream LOUD"), "SEND_SCREAMS")
    assert await message_count(rt, h.general) == before
    # Other commands and plain text still work; the owner holds every permission.
    assert (await post(client, h.a, h.general, "/whisper quiet"))["kind"] == "whisper"
    assert (await post(client, h.owner, h.general, "/scream LOUD"))["kind"] == "scream"


async def test_scream_denied_by_room_override(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.id, "role", deny="SEND_SCREAMS")
    denied(await send(client, h.a, h.general, "/scream LOUD"), "SEND_SCREAMS")


async def test_ls_is_a_private_message_to_the_named_user(client, accounts, rt):
    h = await hall(client, accounts, rt)
    m = await post(client, h.a, h.general, f"/ls <@{h.b.id}> just between us")
    assert m["kind"] == "private"
    assert m["content"] == "just between us"
    assert m["recipient_id"] == h.b.id
    assert m["mentions"] == [h.b.id]
    assert m["mention_everyone"] is False
    m = await post(client, h.a, h.general, f"/ls <@{h.b.id}>\nwith <@{h.owner.id}> named")
    assert m["content"] == f"with <@{h.owner.id}> named"
    assert m["recipient_id"] == h.b.id
    assert set(m["mentions"]) == {h.b.id, h.owner.id}
    # @everyone in a private message notifies nobody.
    m = await post(client, h.owner, h.general, f"/ls <@{h.b.id}> @everyone")
    assert m["kind"] == "private" and m["mention_everyone"] is False


async def test_ls_needs_send_private_messages(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await update_default_permissions(rt, h.id, perms.DEFAULT & ~P.SEND_PRIVATE_MESSAGES)
    denied(await send(client, h.a, h.general, f"/ls <@{h.b.id}> hi"), "SEND_PRIVATE_MESSAGES")
    assert (await post(client, h.owner, h.general, f"/ls <@{h.b.id}> hi"))["kind"] == "private"


async def test_ls_refusals_name_the_content_field(client, accounts, rt):
    h = await hall(client, accounts, rt)
    before = await message_count(rt, h.general)
    for content in (
        f"/ls <@{h.a.id}> talking to myself",  # self
        f"/ls <@{h.b.id}>",  # no text
        f"/ls <@{h.b.id}> ",
        f"/ls <@{h.b.id}>   \n",
        "/ls hello there",  # no mention
        "/ls",
        f"/ls <@{h.outsider.id}> not a member",  # cannot view the room
        "/ls <@999999999> nobody",  # unknown user
        f"/ls<@{h.b.id}> hi",  # no space after the name: plain text (checked below)
    ):
        r = await send(client, h.a, h.general, content)
        if content.startswith("/ls<"):
            assert r.status_code == 201 and r.json()["message"]["kind"] == "normal"
            before += 1
            continue
        invalid(r, "content")
    assert await message_count(rt, h.general) == before


async def test_ls_recipient_who_cannot_view_the_room_is_422(client, accounts, rt):
    h = await hall(client, accounts, rt)
    await override(client, h.owner, h.general, h.b.id, "member", deny="VIEW_CHANNEL")
    invalid(await send(client, h.a, h.general, f"/ls <@{h.b.id}> can you see this"), "content")
    await override(client, h.owner, h.general, h.b.id, "member")
    assert (await post(client, h.a, h.general, f"/ls <@{h.b.id}> now you can"))["kind"] == "private"


async def test_ls_to_a_timed_out_member_who_still_views_is_allowed(client, accounts, rt, clock):
    from datetime import timedelta

    from tests.support.factories import time_out

    h = await hall(client, accounts, rt)
    await time_out(rt, h.id, h.b, clock.now() + timedelta(hours=1))
    assert (await post(client, h.a, h.general, f"/ls <@{h.b.id}> you are muted"))["recipient_id"] == h.b.id
