"""Web Push notifications are worded in each recipient's language (their account's locale), one payload per
language: a Russian and an English recipient of the same message read their own words (docs/push.md)."""

from __future__ import annotations

import json
from typing import Any

from meadhall.push.delivery import _finish, deliveries_of
from tests.support.conversations import group
from tests.support.messages import post
from tests.support.push import subscribe


async def test_each_recipient_reads_the_notification_in_their_language(api, client, accounts, rt, push_service):
    alice = await accounts.register("alice", display_name="Alice")
    boris = await accounts.register("boris", locale="ru")
    carol = await accounts.register("carol", locale="en-GB")
    room = await group(api, alice, boris, carol, name="Mead club")
    russian = await subscribe(api, boris, push_service, "/boris")
    english = await subscribe(api, carol, push_service, "/carol")

    await post(client, alice, room["id"], "Mead tonight?")
    await deliveries_of(rt).idle()

    ru = russian.decrypt(push_service.received("/boris")[0]["body"])
    en = english.decrypt(push_service.received("/carol")[0]["body"])
    assert ru["title"] == "Alice в «Mead club»" and ru["body"] == "Mead tonight?"
    assert en["title"] == "Alice in Mead club" and en["body"] == "Mead tonight?"
    assert "words" not in ru and "words" not in en
    assert {k: v for k, v in ru.items() if k != "title"} == {k: v for k, v in en.items() if k != "title"}

    # The account's language is read at delivery: a change applies to the next notification.
    await api.patch("/users/@me", boris, json={"locale": "en"})
    push_service.requests.clear()
    await post(client, alice, room["id"], "Still on?")
    await deliveries_of(rt).idle()
    assert russian.decrypt(push_service.received("/boris")[0]["body"])["title"] == "Alice in Mead club"


async def test_the_test_notification_and_a_guild_room_in_russian(api, accounts, rt, push_service):
    boris = await accounts.register("boris", locale="ru-RU")
    phone = await subscribe(api, boris, push_service, "/phone")
    await api.post("/push/test", boris, expect=202)
    await deliveries_of(rt).idle()
    payload: dict[str, Any] = phone.decrypt(push_service.received("/phone")[0]["body"])
    assert payload["title"] == "Meadhall" and payload["body"] == "Уведомления приходят на это устройство."


def test_an_attachment_by_someone_unnamed_in_a_guild_room_in_both_languages() -> None:
    payload = {"type": "message", "title": "", "body": "", "url": "/", "tag": "t",
               "words": {"name": None, "room": "general", "in_guild": True, "attachment": True}}
    assert json.loads(_finish(payload, {}, "ru")) == {"type": "message", "title": "Кто-то в #general",
                                                      "body": "Вложение", "url": "/", "tag": "t"}
    assert json.loads(_finish(payload, {}, "en")) == {"type": "message", "title": "Someone in #general",
                                                      "body": "sent an attachment", "url": "/", "tag": "t"}
    # A row queued before notifications were worded per recipient is sent as it was.
    old = {"type": "message", "title": "Ann in #general", "body": "hi", "url": "/", "tag": "t"}
    assert json.loads(_finish(old, {}, "ru")) == old
