"""A conversation call's media-server room (docs/social.md, "Calls"; docs/voice.md, "Reconciliation"): whoever
leaves the call, is removed from the group, or is in it when it ends is removed from the room `dm_<id>` right
after the change; the reconciliation job removes anyone else found there (a leaver back with the token they
still hold, a removal missed while the media server was down), and never a joined participant."""

from __future__ import annotations

from typing import Any

from meadhall.voice import setup as voice_setup
from meadhall.voice.reconcile import reconcile
from tests.support.calls import conversation, decline, join, leave, ongoing, participant, start, states
from tests.support.conversations import remove_recipient


async def trio(api: Any, accounts: Any) -> tuple[Any, Any, Any, str]:
    a, b, c = [await accounts.register(n) for n in ("ann", "ben", "cat")]
    return a, b, c, await conversation(api, a, b, c)


async def all_three_joined(api: Any, accounts: Any) -> tuple[Any, Any, Any, str, str]:
    """A group of three whose call all three have joined: (a, b, c, conversation id, media-server room)."""
    a, b, c, cid = await trio(api, accounts)
    await start(api, a, cid)
    await join(api, b, cid)
    await join(api, c, cid)
    return a, b, c, cid, f"dm_{cid}"


def removed(standin: Any) -> list[tuple[str, str]]:
    return [(c.room, c.identity) for c in standin.of("RemoveParticipant")]


async def test_leaving_an_active_call_removes_the_leaver_from_its_room(api, accounts, rt, standin):
    a, b, c, cid, room = await all_three_joined(api, accounts)
    standin.participants[room] = {a.id, b.id, c.id}
    await leave(api, b, cid)
    assert removed(standin) == [(room, b.id)]
    assert standin.participants[room] == {a.id, c.id}
    assert participant(await ongoing(api, a, cid), a)["state"] == "joined"


async def test_a_call_that_ends_removes_the_last_participant_too(api, accounts, rt, standin):
    a, b, _, cid = await trio(api, accounts)
    await start(api, a, cid)
    await join(api, b, cid)
    room = f"dm_{cid}"
    standin.participants[room] = {a.id, b.id}
    await leave(api, a, cid)  # fewer than two remain: the call ends, b has left as well
    assert sorted(removed(standin)) == sorted([(room, a.id), (room, b.id)])
    assert standin.participants[room] == set()


async def test_declining_or_ringing_removes_nobody(api, accounts, rt, standin):
    a, b, c, cid = await trio(api, accounts)
    await start(api, a, cid)
    await decline(api, b, cid)  # never joined: never in the room
    await join(api, c, cid)
    assert removed(standin) == []


async def test_removal_from_the_group_during_the_call_removes_them_from_the_room(api, accounts, rt, standin):
    a, b, c, cid = await trio(api, accounts)
    d = await accounts.register("dan")
    await api.put(f"/channels/{cid}/recipients/{d.id}", a, expect=200)
    await start(api, a, cid)
    for who in (b, c, d):
        await join(api, who, cid)
    room = f"dm_{cid}"
    standin.participants[room] = {a.id, b.id, c.id, d.id}
    await remove_recipient(api, a, cid, d)
    assert removed(standin) == [(room, d.id)]
    assert states(await ongoing(api, a, cid))[d.id] == "left"
    assert standin.participants[room] == {a.id, b.id, c.id}


async def test_reconciliation_removes_who_is_in_a_call_room_without_being_joined(api, accounts, rt, standin):
    a, b, c, cid, room = await all_three_joined(api, accounts)
    stranger = await accounts.register("stranger")
    await leave(api, c, cid)
    # c came back with the token they still hold; a stranger got in somehow; a and b are the call.
    standin.participants[room] = {a.id, b.id, c.id, stranger.id, "egress-recorder"}
    standin.calls.clear()
    done = await reconcile(rt)
    assert done["removed"] == 2
    assert sorted(removed(standin)) == sorted([(room, c.id), (room, stranger.id)])
    assert standin.participants[room] == {a.id, b.id, "egress-recorder"}  # not a user id: not ours to judge

    # The room of a conversation whose call has ended holds nobody.
    await leave(api, b, cid)
    standin.participants[room] = {a.id, b.id}
    standin.calls.clear()
    assert (await reconcile(rt))["removed"] == 2
    assert standin.participants[room] == set()


async def test_a_media_server_that_is_down_fails_no_leave_and_the_next_run_removes(api, accounts, rt, standin):
    a, b, c, cid, room = await all_three_joined(api, accounts)
    participants = {a.id, b.id, c.id}
    await standin.stop()
    await leave(api, c, cid)  # answered 200 although the removal could not be made
    assert states(await ongoing(api, a, cid))[c.id] == "left"
    await standin.start()
    standin.participants[room] = participants
    assert (await reconcile(rt))["removed"] == 1
    assert standin.participants[room] == {a.id, b.id}


async def test_a_failing_media_server_client_fails_no_leave(api, accounts, rt, standin, monkeypatch):
    """The leave has committed when the room is left: even an error of the client itself is only logged."""

    class Broken:
        def __init__(self, _settings: Any) -> None:
            pass

        async def __aenter__(self) -> Any:
            raise RuntimeError("no media server client")

        async def __aexit__(self, *_exc: object) -> None:
            return None

    a, b, c, cid, room = await all_three_joined(api, accounts)
    monkeypatch.setattr(voice_setup, "MediaServer", Broken)
    await leave(api, c, cid)  # 200, not 500
    assert states(await ongoing(api, a, cid))[c.id] == "left"
    assert removed(standin) == []
