"""A notification waiting for delivery, and its JSON in the outbox (push/delivery.py). It holds what the delivery
needs and nothing read later: the push payload built at send time, the people the send path named, and what the
notification levels are decided on (push/settings/recipients.py), which is read at delivery, as today's settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from meadhall.messages.sent_hooks import SentMessage

# What push/settings/recipients.py reads of the message itself.
_DECIDING = ("mentions", "mention_everyone", "kind")


@dataclass(frozen=True)
class Notice:
    recipients: list[int]
    payload: dict[str, Any]  # its `body` is the whole content until delivery names the mentioned and clips it
    check_online: bool = True
    mentioned: tuple[int, ...] = ()
    # A user's message: `recipients` are then the people it names, still to be filtered and extended by their
    # notification levels (push/settings/recipients.py) off the send path.
    sent: SentMessage | None = None


def notice_json(notice: Notice) -> str:
    sent = notice.sent
    return orjson.dumps({
        "recipients": notice.recipients, "payload": notice.payload, "check_online": notice.check_online,
        "mentioned": list(notice.mentioned),
        "sent": None if sent is None else {
            "message": {k: sent.message.get(k) for k in _DECIDING}, "channel_id": sent.channel_id,
            "guild_id": sent.guild_id, "author_id": sent.author_id},
    }).decode()


def notice_from_json(body: str) -> Notice:
    value = orjson.loads(body)
    sent = value["sent"]
    return Notice(
        [int(u) for u in value["recipients"]], value["payload"], bool(value["check_online"]),
        tuple(int(m) for m in value["mentioned"]),
        None if sent is None else SentMessage(sent["message"], int(sent["channel_id"]),
                                              None if sent["guild_id"] is None else int(sent["guild_id"]), None,
                                              int(sent["author_id"]), [], []))
