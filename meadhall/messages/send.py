"""Send a message (OpenAPI: sendMessage): validation, commands, mentions, slowmode, the instance
administrator's audited bypass, nonce dedupe, and MESSAGE_CREATE to the room's viewers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from meadhall.accounts.imported import refuse_imported_id
from meadhall.audit.record import record
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, rate_limited, validation_error
from meadhall.core.ids import parse_id
from meadhall.core.ratelimit import Bucket
from meadhall.core.text import norm
from meadhall.db.uow import UnitOfWork
from meadhall.messages import queries
from meadhall.messages.attachments import check_attachments, do_bind_attachments
from meadhall.messages.commands import (
    Parsed,
    mentioned_channel_ids,
    mentioned_user_ids,
    mentions_everyone,
    parse_command,
)
from meadhall.messages.events import notify_message_create
from meadhall.messages.hydrate import audience_views, hydrate, hydrate_one
from meadhall.messages.nonces import claim_nonce
from meadhall.messages.read_states import bump_mentions
from meadhall.messages.rooms import MessageRoom, access_message_room
from meadhall.messages.rows import MessageRow
from meadhall.messages.sent_hooks import SentMessage, announce_sent, record_sent, wanted
from meadhall.messages.views import MessageView
from meadhall.runtime import Runtime

P = perms.P


@dataclass(frozen=True)
class Draft:
    content: str
    attachment_ids: list[str]
    nonce: str | None
    reply_to_id: str | None


@dataclass(frozen=True)
class Sent:
    message: MessageView
    created: bool  # False when a repeated nonce returned the first message


async def do_send_message(rt: Runtime, principal: Principal, raw_channel_id: str, draft: Draft,
                       bypassed: list[str]) -> Sent:
    """`bypassed` names the rate limits an instance administrator was let through (route layer)."""
    async with rt.uow() as uow:
        room = await access_message_room(uow.conn, principal, raw_channel_id, uow.now, with_caller=True)
        room.require(P.SEND_MESSAGES)
        await room.check_send(uow.conn)
        message_id = uow.next_id()
        if draft.nonce:
            # Before the draft's checks: a retry is answered even when slowmode would refuse a new message now.
            first = await claim_nonce(rt, uow, room.channel_id, principal.user_id, draft.nonce, message_id)
            if first is not None:
                return Sent(await hydrate_one(uow.conn, first, principal.user_id, uow.now), created=False)
        parsed = parse_command(draft.content)
        await _check_draft(uow, room, principal, parsed, draft)
        bypassed = bypassed + await _slowmode(rt, room, principal)
        row = await _build_row(uow, room, principal, parsed, draft, message_id)
        await queries.insert_message(uow.conn, row)
        if draft.attachment_ids:
            await do_bind_attachments(uow.conn, room, principal.user_id, draft.attachment_ids, row["id"])
        # The insert trigger moves the room's `last_message_id` (migration 0010).
        notified = await _notified(uow, room, row)
        await bump_mentions(uow, room.channel_id, notified)
        for limit in bypassed:
            await record(uow, "limits.bypass", actor_id=principal.user_id, target_type="channel",
                         target_id=room.channel_id, guild_id=room.guild_id,
                         data={"limit": limit, "channel_id": str(room.channel_id)})
        # A new message has no reactions yet: skip their queries.
        [view] = await hydrate(uow.conn, [row], principal.user_id, uow.now, with_reactions=False,
                               with_attachments=bool(draft.attachment_ids), known_users=_caller(room))
        audience = await room.audience(uow.conn, uow.now, row)
        for shown, receivers in await audience_views(uow.conn, row, view, audience, uow.now):
            uow.emit(notify_message_create(shown, receivers))
        sent = None
        if wanted():  # Web Push notes its work in this transaction, so a kill after the commit loses none
            conversation = audience if room.guild_id is None else []
            sent = SentMessage(view, room.channel_id, room.guild_id, room.channel["name"], principal.user_id,
                               notified, conversation, recorded=True)
            await record_sent(rt, uow, sent)
    if sent is not None:  # after commit: wakes the delivery, never waits for it (docs/push.md)
        announce_sent(rt, sent)
    return Sent(view, created=True)


def _caller(room: MessageRoom) -> dict[int, Any]:
    caller = room.caller
    return {} if caller is None else {caller["id"]: caller}


async def _notified(uow: UnitOfWork, room: MessageRoom, row: MessageRow) -> list[int]:
    """Whose mention count this message raises (OpenAPI: listReadStates): the recipient of a private message (users
    named inside it cannot see it); else the mentioned users, or every viewer for `@everyone`, never the
    author, and only users who may view the room (a mention must not reveal the room to others)."""
    if row["kind"] == "private":
        return [cast(int, row["recipient_id"])]  # a private message always names its recipient
    viewers = await room.viewers(uow.conn, uow.now)
    wanted = viewers if row["mention_everyone"] else [int(m) for m in row["mentions"]]
    visible = set(viewers)
    return [u for u in wanted if u != row["author_id"] and u in visible]


async def _check_draft(uow: UnitOfWork, room: MessageRoom, principal: Principal, parsed: Parsed, draft: Draft
                       ) -> None:
    if not parsed.content.strip() and not draft.attachment_ids:
        raise validation_error("content", "must not be empty")
    if parsed.kind == "scream":
        room.require(P.SEND_SCREAMS)
    if parsed.kind == "private":
        room.require(P.SEND_PRIVATE_MESSAGES)
        if parsed.recipient_id == principal.user_id:
            raise validation_error("content", "a private message needs another recipient")
        if parsed.recipient_id is None or not await room.can_view(uow.conn, uow.now, parsed.recipient_id):
            raise validation_error("content", "the recipient cannot view this room")
        await refuse_imported_id(uow.conn, parsed.recipient_id)  # a private message to nobody who can read it
    if draft.attachment_ids:
        room.require(P.ATTACH_FILES)
        await check_attachments(uow.conn, room, principal.user_id, draft.attachment_ids)
    if draft.reply_to_id is not None:
        reply_id = parse_id(draft.reply_to_id)
        target = None if reply_id is None else await queries.select_message(uow.conn, room.channel_id, reply_id)
        if target is None or (target["kind"] == "private"
                              and principal.user_id not in (target["author_id"], target["recipient_id"])):
            raise validation_error("reply_to_id", "must be a message of this room")


async def _slowmode(rt: Runtime, room: MessageRoom, principal: Principal) -> list[str]:
    """One message per `slowmode_seconds` per member; BYPASS_SLOWMODE holders are exempt and an
    instance administrator passes with an audit entry when the limit would have applied."""
    seconds = int(room.channel["slowmode_seconds"] or 0)
    if seconds <= 0 or room.exempt_from_slowmode():
        return []
    spec = Bucket("channel.slowmode", 1, seconds, "user_room")
    decision = await rt.limiter.hit("channel.slowmode", f"u{principal.user_id}:c{room.channel_id}", rt.now_ts(),
                                    spec=spec)
    if decision.allowed:
        return []
    if room.is_instance_admin:
        return ["channel.slowmode"]
    raise rate_limited("channel.slowmode", decision.retry_after, decision.headers())


async def _build_row(uow: UnitOfWork, room: MessageRoom, principal: Principal, parsed: Parsed, draft: Draft,
                     message_id: int) -> MessageRow:
    mentions = await queries.select_existing_user_ids(uow.conn, mentioned_user_ids(parsed.content))
    recipient = parsed.recipient_id  # set for every `/ls` message
    if parsed.kind == "private" and recipient is not None and recipient not in mentions:
        mentions.append(recipient)
    channel_mentions = await queries.select_guild_channel_ids(uow.conn, room.guild_id, mentioned_channel_ids(parsed.content)) \
        if room.guild_id is not None else []
    return {
        "id": message_id,
        "channel_id": room.channel_id,
        "guild_id": room.guild_id,
        "author_id": principal.user_id,
        "webhook_id": None,
        "webhook_name": None,
        "webhook_avatar": None,
        "content": parsed.content,
        "content_norm": norm(parsed.content),
        "kind": parsed.kind,
        "recipient_id": parsed.recipient_id,
        "system_event": None,
        "nonce": draft.nonce,
        "reply_to_id": parse_id(draft.reply_to_id) if draft.reply_to_id else None,
        "mentions": [str(m) for m in mentions],
        "mention_channels": [str(c) for c in channel_mentions],
        "mention_everyone": mentions_everyone(parsed.content) and room.has(P.MENTION_EVERYONE)
        and parsed.kind != "private",
        "suppress_embeds": not room.has(P.EMBED_LINKS),
        "pinned": False,
        "pinned_at": None,
        "created_at": uow.now,
        "edited_at": None,
        "reacted": False,
        "has_attachments": bool(draft.attachment_ids),
    }


async def check_send_rate(rt: Runtime, principal: Principal, channel_key: str) -> tuple[Any, bool]:
    """The `messages.send` bucket (per user and room): (decision, bypassed). Raises 429 unless the caller
    is an instance administrator, whose pass is reported so the service can audit it."""
    # Keyed by the parsed id: "0123" and "123" name the same room and must share one bucket.
    room_id = parse_id(channel_key)
    room_key = channel_key if room_id is None else str(room_id)
    decision = await rt.limiter.hit("messages.send", f"u{principal.user_id}:c{room_key}", rt.now_ts())
    if decision.allowed:
        return decision, False
    if principal.is_instance_admin:
        return decision, True
    raise rate_limited("messages.send", decision.retry_after, decision.headers())


__all__ = ["Draft", "Sent", "do_send_message", "check_send_rate", "AppError"]
