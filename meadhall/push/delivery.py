"""Web Push delivery (docs/push.md): off the request path, through the outbound guard.

The send path hands each committed message to `on_message_sent`, which only queues it. A background task per
message then applies the recipients' notification levels (push/settings/recipients.py: who is named, muted,
or chose `all`), drops those who have a client open (a gateway connection on any node) or who passed
their 20 notifications a minute, and posts one encrypted message (RFC 8291 `aes128gcm`, VAPID RFC 8292, TTL
12 hours) to each subscription of the others. 404/410 remove the subscription at once; any other failure
counts, and the fifth in a row removes it; a success resets the count."""

from __future__ import annotations

import asyncio
import json
import re
import weakref
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import structlog
from py_vapid import Vapid02
from pywebpush import WebPusher

from meadhall.accounts.presence import in_client
from meadhall.accounts.queries import select_summary_rows
from meadhall.auth.sessions import ttl
from meadhall.core.limits import PUSH_BODY_LENGTH, PUSH_FAILURES_MAX, PUSH_TTL_SECONDS
from meadhall.integrations.outbound import OutboundBlocked, OutboundFailed
from meadhall.messages.sent_hooks import SentMessage
from meadhall.push import queries
from meadhall.push.keys import load_private_key
from meadhall.push.queries import SubscriptionRow
from meadhall.push.settings.recipients import push_recipients
from meadhall.runtime import Runtime

log = structlog.get_logger("meadhall.push")

CONCURRENT = 8  # posts in flight per process; a slow push service holds one slot for at most 5 s
MAX_QUEUED = 1000  # notifications waiting beyond this are dropped (and logged), never buffered without bound
CHUNK = 500  # recipients whose subscriptions are read in one query (an @everyone of a large server)
SECONDS = 5.0
GONE = {404, 410}
_MENTION = re.compile(r"<@!?(\d{1,20})>")


@dataclass(frozen=True)
class Notice:
    recipients: list[int]
    payload: dict[str, Any]  # its `body` is the whole content until `_finish` names the mentioned and clips it
    check_online: bool = True
    mentioned: tuple[int, ...] = ()
    # A user's message: `recipients` are then the people it names, still to be filtered and extended by their
    # notification levels (push/settings/recipients.py) off the send path.
    sent: SentMessage | None = None


class Deliveries:
    """The background deliveries of one runtime."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.slots = asyncio.Semaphore(CONCURRENT)
        self.tasks: set[asyncio.Task[None]] = set()

    def put(self, notice: Notice) -> None:
        if len(self.tasks) >= MAX_QUEUED:
            log.warning("push queue full, notification dropped", recipients=len(notice.recipients))
            return
        task = asyncio.get_running_loop().create_task(self._run(notice))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def idle(self) -> None:
        """Wait until every queued notification was delivered or given up (tests, shutdown)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def _run(self, notice: Notice) -> None:
        try:
            await deliver_notice(self.rt, notice, self.slots)
        except Exception:
            log.exception("push delivery failed")


_deliveries: weakref.WeakKeyDictionary[Runtime, Deliveries] = weakref.WeakKeyDictionary()


def deliveries_of(rt: Runtime) -> Deliveries:
    found = _deliveries.get(rt)
    if found is None:
        found = _deliveries[rt] = Deliveries(rt)
    return found


def on_message_sent(rt: Runtime, sent: SentMessage) -> None:
    """The hook of the send path (messages/sent_hooks.py): queue, never wait."""
    if not rt.settings.web_push_enabled:
        return
    recipients = sorted({*sent.conversation, *sent.mentioned} - {sent.author_id})
    # Any message of a server's room may reach those who chose `all` there: one indexed read finds them.
    if recipients or sent.guild_id is not None:
        mentioned = tuple(int(m) for m in sent.message.get("mentions") or ())
        deliveries_of(rt).put(Notice(recipients, message_payload(sent), mentioned=mentioned, sent=sent))


def message_payload(sent: SentMessage) -> dict[str, Any]:
    """What the service worker receives (docs/push.md, "Payload")."""
    message = sent.message
    author = message.get("author") or message.get("webhook") or {}  # a webhook's message shows its snapshot
    name = author.get("display_name") or author.get("username") or author.get("name") or "Someone"
    if sent.guild_id is not None:
        title = f"{name} in #{sent.channel_name}" if sent.channel_name else name
    else:
        title = f"{name} in {sent.channel_name}" if sent.channel_name else name
    body = (message.get("content") or "").strip() or "sent an attachment"
    place = str(sent.guild_id) if sent.guild_id is not None else "@me"
    return {"type": "message", "message_id": str(message["id"]), "channel_id": str(sent.channel_id),
            "guild_id": None if sent.guild_id is None else str(sent.guild_id), "title": title, "body": body,
            "url": f"/channels/{place}/{sent.channel_id}/{message['id']}", "tag": f"channel:{sent.channel_id}"}


def _finish(payload: dict[str, Any], names: dict[int, str]) -> bytes:
    """The JSON sent: `<@id>` tokens written as `@name` (a notification cannot look names up), the body
    clipped to its length."""
    body = _MENTION.sub(lambda m: f"@{names[int(m.group(1))]}" if int(m.group(1)) in names else m.group(0),
                        payload["body"])
    if len(body) > PUSH_BODY_LENGTH:
        body = body[:PUSH_BODY_LENGTH - 1] + "…"
    return json.dumps({**payload, "body": body}, separators=(",", ":")).encode()


async def deliver_notice(rt: Runtime, notice: Notice, slots: asyncio.Semaphore) -> None:
    if notice.sent is not None:
        async with rt.read() as uow:
            recipients = await push_recipients(uow.conn, notice.sent, notice.recipients, uow.now)
        if not recipients:
            return
        notice = replace(notice, recipients=recipients)
    body = b""
    for start in range(0, len(notice.recipients), CHUNK):
        # Subscriptions first: most recipients of an @everyone have none, and cost nothing more then.
        async with rt.read() as uow:
            subscriptions = await queries.select_subscriptions_of(uow.conn, notice.recipients[start:start + CHUNK],
                                                                  uow.now - ttl(rt))
            if subscriptions and not body:
                rows = await select_summary_rows(uow.conn, notice.mentioned) if notice.mentioned else {}
                body = _finish(notice.payload, {i: r["display_name"] or r["username"] for i, r in rows.items()})
        wanted: set[int] = set()
        for user_id in sorted({sub["user_id"] for sub in subscriptions}):
            if notice.check_online and await in_client(rt, user_id):
                continue
            decision = await rt.limiter.hit("push.notifications", f"u{user_id}", rt.now_ts())
            if decision.allowed:
                wanted.add(user_id)

        await asyncio.gather(*(_deliver_in_slot(rt, slots, sub, body) for sub in subscriptions
                               if sub["user_id"] in wanted))


async def _deliver_in_slot(rt: Runtime, slots: asyncio.Semaphore, sub: SubscriptionRow, body: bytes) -> None:
    async with slots:
        await deliver(rt, sub, body)


async def deliver(rt: Runtime, sub: SubscriptionRow, body: bytes) -> bool:
    """One encrypted, signed POST to the subscription's push service; records the outcome."""
    status: int | None = None
    try:
        request = _request(rt, sub, body)
        status = (await rt.outbound.request("POST", sub["endpoint"], headers=request[0], data=request[1],
                                            redirects=0, max_bytes=4096, seconds=SECONDS)).status
    except (OutboundBlocked, OutboundFailed) as exc:
        log.info("push delivery failed", subscription=sub["id"], reason=str(exc))
    except Exception:
        log.exception("push message could not be built", subscription=sub["id"])
    async with rt.uow() as uow:
        if status is not None and 200 <= status < 300:
            await queries.update_delivered(uow.conn, sub["id"], uow.now)
            return True
        if status in GONE:
            await queries.delete_subscription(uow.conn, sub["id"])
            return False
        failures = await queries.update_failed(uow.conn, sub["id"])
        if failures is not None and failures >= PUSH_FAILURES_MAX:
            await queries.delete_subscription(uow.conn, sub["id"])
    return False


def _request(rt: Runtime, sub: SubscriptionRow, body: bytes) -> tuple[dict[str, str], bytes]:
    """(headers, encrypted body): RFC 8291 by pywebpush, the VAPID signature by py_vapid."""
    assert rt.settings.VAPID_PRIVATE_KEY is not None
    encrypted = WebPusher({"endpoint": sub["endpoint"], "keys": {"p256dh": sub["p256dh"], "auth": sub["auth"]}}
                          ).encode(body, "aes128gcm")["body"]
    parts = urlsplit(sub["endpoint"])
    claims = {"sub": rt.settings.VAPID_SUBJECT, "aud": f"{parts.scheme}://{parts.netloc}",
              "exp": int(rt.now_ts()) + PUSH_TTL_SECONDS}
    vapid = Vapid02(private_key=load_private_key(rt.settings.VAPID_PRIVATE_KEY))
    headers = {**vapid.sign(claims), "TTL": str(PUSH_TTL_SECONDS), "Content-Encoding": "aes128gcm",
               "Content-Type": "application/octet-stream", "Urgency": "normal"}
    return headers, bytes(encrypted)


async def do_send_test(rt: Runtime, user_id: int) -> int:
    """A test notification to every subscription of the user, even while a client is open (the person
    asked for it from one). Returns how many subscriptions it went to."""
    async with rt.read() as uow:
        count = len(await queries.select_subscriptions(uow.conn, user_id))
    if count:
        deliveries_of(rt).put(Notice([user_id], {
            "type": "test", "message_id": None, "channel_id": None, "guild_id": None, "title": "Meadhall",
            "body": "Notifications reach this device.", "url": "/", "tag": "test"}, check_online=False))
    return count
