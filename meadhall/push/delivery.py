"""Web Push delivery (docs/push.md): off the request path, through the outbound guard, from a durable queue.

The send path notes each committed message's notification in `push_outbox`, in the message's own transaction
(messages/sent_hooks.py, `record_sent`), and wakes this runtime after the commit. The runtime claims waiting rows
with a lease and delivers each: it applies the recipients' notification levels (push/settings/recipients.py: who is
named, muted, or chose `all`), drops those who have a client open (a gateway connection on any node) or who passed
their 20 notifications a minute, and posts one encrypted message (RFC 8291 `aes128gcm`, VAPID RFC 8292, TTL 12
hours) to each subscription of the others; then it deletes the row. 404/410 remove the subscription at once; any
other failure counts, and the fifth in a row removes it; a success resets the count.

A row outlives the process that wrote or claimed it: a claim is a lease that its holder renews while it lives
(every LEASE_SECONDS / 3); the rows of a stopped or killed node become claimable when their lease ends, and a poll
(every POLL_EVERY seconds, one node per period) hands them, and any row no wake-up reached, to a live node. Between
the post and the row's deletion a kill can make a notification arrive twice; its `tag` makes the device show it
once."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
import weakref
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import structlog

from meadhall.accounts.presence import in_client
from meadhall.accounts.queries import select_summary_rows
from meadhall.auth.sessions import ttl
from meadhall.core.clock import as_utc
from meadhall.core.limits import PUSH_BODY_LENGTH, PUSH_FAILURES_MAX, PUSH_TTL_SECONDS
from meadhall.core.words import words
from meadhall.db.uow import UnitOfWork
from meadhall.integrations.outbound import OutboundBlocked, OutboundFailed
from meadhall.messages.sent_hooks import SentMessage
from meadhall.push import queries
from meadhall.push.keys import load_private_key
from meadhall.push.notices import Notice, notice_from_json, notice_json
from meadhall.push.queries import DeliveryRow, OutboxRow, SubscriptionRow
from meadhall.push.settings.recipients import push_recipients
from meadhall.runtime import Runtime

log = structlog.get_logger("meadhall.push")

CONCURRENT = 8  # posts in flight per process; a slow push service holds one slot for at most 5 s
IN_FLIGHT = 2 * CONCURRENT  # notifications a process holds at once; the rest wait in the table for any node
MAX_QUEUED = 1000  # rows kept beyond this are dropped, oldest first (and logged), never kept without bound
MAX_ATTEMPTS = 5  # claims of one row; a row every claimant failed on this often is given up
LEASE_SECONDS = 30.0  # how long a claim holds without renewal: the delay a killed node's notifications take
POLL_EVERY = 5.0
CHUNK = 500  # recipients whose subscriptions are read in one query (an @everyone of a large server)
SECONDS = 5.0
GONE = {404, 410}
_MENTION = re.compile(r"<@!?(\d{1,20})>")

__all__ = ["Notice", "Deliveries", "deliveries_of", "queue_push", "wake_push", "do_send_test"]


class Deliveries:
    """The claims and deliveries of one runtime."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.me = uuid.uuid4().hex  # claims name the process holding them
        self.slots = asyncio.Semaphore(CONCURRENT)
        self.tasks: set[asyncio.Task[None]] = set()
        self.held: set[int] = set()  # rows claimed and not yet finished
        self.claimed = 0  # rows claimed since start
        self._drain: asyncio.Task[None] | None = None
        self._again = False
        self._starved = False  # a claim found no capacity: the next finished delivery claims again
        self._failing = False
        self.stopping = False

    def wake(self) -> None:
        """Claim what waits, now (after a commit that wrote a row): never waits."""
        if self.stopping:
            return
        if self._drain is not None and not self._drain.done():
            self._again = True
            return
        self._drain = asyncio.get_running_loop().create_task(self._drain_loop())

    def start(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _drain_loop(self) -> None:
        try:
            while True:
                self._again = False
                claimed, room = await self.claim()
                # A full batch may have left more behind; no capacity waits for a delivery to finish.
                if room == 0 or (claimed < room and not self._again):
                    break
        except Exception:
            # Once per outage, not once per message: the rows wait, and the poll claims them when it is over.
            if not self._failing:
                log.exception("push outbox claim failed; the poll retries")
            self._failing = True
        else:
            if self._failing:
                log.info("push outbox claims working again")
            self._failing = False

    async def claim(self) -> tuple[int, int]:
        """(claimed, asked for): claim up to the free capacity and start delivering."""
        room = IN_FLIGHT - len(self.held)
        if self.stopping:
            return 0, 0
        if room <= 0:
            self._starved = True
            return 0, 0
        async with self.rt.uow() as uow:
            rows = await queries.claim_outbox(uow.conn, self.me, uow.now,
                                              uow.now + timedelta(seconds=LEASE_SECONDS), room)
            cutoff = uow.now - timedelta(seconds=PUSH_TTL_SECONDS)
            given_up = [r["id"] for r in rows if r["attempts"] > MAX_ATTEMPTS or _older(r, cutoff)]
            if given_up:
                await queries.delete_outbox_rows(uow.conn, self.me, given_up)
                log.warning("push notifications given up", count=len(given_up))
        self.claimed += len(rows)
        for row in rows:
            if row["id"] not in given_up:
                self.held.add(row["id"])
                self.start(self._deliver_row(row))
        return len(rows), room

    async def _deliver_row(self, row: OutboxRow) -> None:
        try:
            await deliver_notice(self.rt, notice_from_json(row["body"]), self.slots)
        except asyncio.CancelledError:  # stopped: the row stays, its lease given back by `close`
            raise
        except Exception:  # its lease runs out and another claim tries again, up to MAX_ATTEMPTS
            log.exception("push delivery failed", row=row["id"])
            self._finished(row["id"])
            return
        try:
            async with self.rt.uow() as uow:
                await queries.delete_outbox_rows(uow.conn, self.me, [row["id"]])
        except Exception:
            log.exception("delivered push notification not deleted", row=row["id"])
        self._finished(row["id"])

    def _finished(self, row_id: int) -> None:
        self.held.discard(row_id)
        if self._starved:  # rows may have waited for this capacity
            self._starved = False
            self.wake()

    async def renew(self) -> None:
        """The periodic job of every node: keep the leases of what it delivers."""
        held = sorted(self.held)
        if held:
            async with self.rt.uow() as uow:
                await queries.update_outbox_leases(uow.conn, self.me, held,
                                                   uow.now + timedelta(seconds=LEASE_SECONDS))

    async def poll(self) -> None:
        """The periodic job of one node per period: rows nobody holds (written by a node that died before
        claiming, or whose claim ran out) are claimed here; the table is kept to MAX_QUEUED rows."""
        async with self.rt.read() as uow:
            waiting = await queries.any_claimable(uow.conn, uow.now)
            beyond = await queries.select_outbox_beyond(uow.conn, MAX_QUEUED)
        if beyond is not None:
            async with self.rt.uow() as uow:
                dropped = await queries.delete_outbox_through(uow.conn, beyond)
            log.warning("push queue full, oldest notifications dropped", count=dropped)
        if waiting:
            self.wake()

    async def idle(self) -> None:
        """Wait until nothing is being claimed or delivered by this runtime (tests, shutdown)."""
        while True:
            if self._drain is not None and not self._drain.done():
                await asyncio.gather(self._drain, return_exceptions=True)
            elif self.tasks:
                await asyncio.gather(*list(self.tasks), return_exceptions=True)
            else:
                return

    async def close(self, seconds: float = 5.0) -> None:
        """Stop (a graceful shutdown): claim nothing more, let what is being delivered finish for up to `seconds`,
        and give the rest back at once (their lease set to now) for another node to take."""
        self.stopping = True
        try:  # the rest of `seconds` is for handing back what is left
            await asyncio.wait_for(self.idle(), max(0.0, seconds - 0.2))
        except TimeoutError:
            pass
        for task in [*self.tasks, *([self._drain] if self._drain else [])]:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        held, self.held = sorted(self.held), set()
        if held:
            async with self.rt.uow() as uow:
                await queries.update_outbox_leases(uow.conn, self.me, held, uow.now)
            log.info("push notifications handed back", count=len(held))


def _older(row: OutboxRow, cutoff: Any) -> bool:
    created = as_utc(row["created_at"])
    return created is not None and created < cutoff


_deliveries: weakref.WeakKeyDictionary[Runtime, Deliveries] = weakref.WeakKeyDictionary()


def deliveries_of(rt: Runtime) -> Deliveries:
    found = _deliveries.get(rt)
    if found is None:
        found = _deliveries[rt] = Deliveries(rt)
    return found


def _concerns_anyone(sent: SentMessage) -> bool:
    # Any message of a server's room may reach those who chose `all` there: the delivery's one indexed read finds
    # them.
    return sent.guild_id is not None or bool({*sent.conversation, *sent.mentioned} - {sent.author_id})


def _notice(sent: SentMessage) -> Notice | None:
    if not _concerns_anyone(sent):
        return None
    recipients = sorted({*sent.conversation, *sent.mentioned} - {sent.author_id})
    mentioned = tuple(int(m) for m in sent.message.get("mentions") or ())
    return Notice(recipients, message_payload(sent), mentioned=mentioned, sent=sent)


async def queue_notice(uow: UnitOfWork, notice: Notice) -> None:
    await queries.insert_outbox(uow.conn, uow.next_id(), uow.now, notice_json(notice))


async def queue_push(rt: Runtime, uow: UnitOfWork, sent: SentMessage) -> None:
    """Added to the send path's `message_stored` hook (messages/sent_hooks.py), inside its transaction: the row
    exists exactly when the message does."""
    if not rt.settings.web_push_enabled:
        return
    notice = _notice(sent)
    if notice is not None:
        await queue_notice(uow, notice)


def wake_push(rt: Runtime, sent: SentMessage) -> None:
    """Added to the send path's `message_sent` hook, after its commit: wake the claims, never wait. A path that wrote no row in its
    transaction has it written now, off the answer's path."""
    if not rt.settings.web_push_enabled:
        return
    deliveries = deliveries_of(rt)
    if sent.recorded:
        if _concerns_anyone(sent):  # else no row was written: nothing to claim
            deliveries.wake()
        return
    notice = _notice(sent)
    if notice is not None:
        deliveries.start(_queue_late(rt, notice))


async def _queue_late(rt: Runtime, notice: Notice) -> None:
    try:
        async with rt.uow() as uow:
            await queue_notice(uow, notice)
    except Exception:
        log.exception("push notification not queued")
        return
    deliveries_of(rt).wake()


def message_payload(sent: SentMessage) -> dict[str, Any]:
    """What the service worker receives (docs/push.md, "Payload"). Its words are written at delivery, in each
    recipient's language (`_worded`): the payload keeps what they are made of under `words`, which is never
    sent; `title` and `body` hold the English ones (what a row queued by an older version has)."""
    message = sent.message
    # A webhook's message shows its snapshot.
    author: Mapping[str, Any] = message.get("author") or message.get("webhook") or {}
    name = author.get("display_name") or author.get("username") or author.get("name") or None
    content = (message.get("content") or "").strip()
    made_of = {"name": name, "room": sent.channel_name or None, "in_guild": sent.guild_id is not None,
               "attachment": not content}
    place = str(sent.guild_id) if sent.guild_id is not None else "@me"
    payload = {"type": "message", "message_id": str(message["id"]), "channel_id": str(sent.channel_id),
               "guild_id": None if sent.guild_id is None else str(sent.guild_id), "title": "", "body": content,
               "url": f"/channels/{place}/{sent.channel_id}/{message['id']}", "tag": f"channel:{sent.channel_id}",
               "words": made_of}
    return {**payload, **_worded(payload, "en")}


def _worded(payload: dict[str, Any], lang: str) -> dict[str, Any]:
    """The payload's title and body in `lang` (push.* of meadhall/core/words/)."""
    made_of = payload.get("words")
    if not isinstance(made_of, dict):
        return payload
    said = words(lang)
    if made_of.get("test"):
        return {**payload, "title": said.say("push.testTitle"), "body": said.say("push.testBody")}
    name = made_of.get("name") or said.say("push.someone")
    room = made_of.get("room")
    title = name if not room else said.say("push.inRoom" if made_of.get("in_guild") else "push.inConversation",
                                           name=name, room=room)
    body = said.say("push.attachment") if made_of.get("attachment") else payload["body"]
    return {**payload, "title": title, "body": body}


def _finish(payload: dict[str, Any], names: dict[int, str], lang: str = "en") -> bytes:
    """The JSON sent, in the recipient's language `lang`: `<@id>` tokens written as `@name` (a notification
    cannot look names up), the body clipped to its length."""
    payload = {k: v for k, v in _worded(payload, lang).items() if k != "words"}
    body = _MENTION.sub(lambda m: f"@{names[int(m.group(1))]}" if int(m.group(1)) in names else m.group(0),
                        payload["body"])
    if len(body) > PUSH_BODY_LENGTH:
        body = body[:PUSH_BODY_LENGTH - 1] + "…"
    return json.dumps({**payload, "body": body}, separators=(",", ":"), ensure_ascii=False).encode()


async def deliver_notice(rt: Runtime, notice: Notice, slots: asyncio.Semaphore) -> None:
    if notice.sent is not None:
        async with rt.read() as uow:
            recipients = await push_recipients(uow.conn, notice.sent, notice.recipients, uow.now)
        if not recipients:
            return
        notice = replace(notice, recipients=recipients)
    names: dict[int, str] | None = None
    bodies: dict[str, bytes] = {}  # by the recipient's language
    for start in range(0, len(notice.recipients), CHUNK):
        # Subscriptions first: most recipients of an @everyone have none, and cost nothing more then.
        async with rt.read() as uow:
            subscriptions = await queries.select_subscriptions_of(uow.conn, notice.recipients[start:start + CHUNK],
                                                                  uow.now - ttl(rt))
            if subscriptions and names is None:
                rows = await select_summary_rows(uow.conn, notice.mentioned) if notice.mentioned else {}
                names = {i: r["display_name"] or r["username"] for i, r in rows.items()}
        for sub in subscriptions:
            lang = words(sub["locale"]).lang
            if lang not in bodies:
                bodies[lang] = _finish(notice.payload, names or {}, lang)
        wanted: set[int] = set()
        for user_id in sorted({sub["user_id"] for sub in subscriptions}):
            if notice.check_online and await in_client(rt, user_id):
                continue
            decision = await rt.limiter.hit("push.notifications", f"u{user_id}", rt.now_ts())
            if decision.allowed:
                wanted.add(user_id)

        await asyncio.gather(*(_deliver_in_slot(rt, slots, sub, bodies[words(sub["locale"]).lang])
                               for sub in subscriptions if sub["user_id"] in wanted))


async def _deliver_in_slot(rt: Runtime, slots: asyncio.Semaphore, sub: DeliveryRow, body: bytes) -> None:
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
    # pywebpush brings requests, http_ece and py_vapid (some 5 MiB): loaded by the first delivery, not at start.
    from py_vapid import Vapid02
    from pywebpush import WebPusher

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
        async with rt.uow() as uow:
            await queue_notice(uow, Notice([user_id], {
                "type": "test", "message_id": None, "channel_id": None, "guild_id": None, "title": "Meadhall",
                "body": "Notifications reach this device.", "url": "/", "tag": "test", "words": {"test": True}},
                check_online=False))
        deliveries_of(rt).wake()
    return count
