"""Web Push configuration and subscriptions (docs/push.md; OpenAPI: getPushConfig, listPushSubscriptions,
createPushSubscription, deletePushSubscription, sendTestPush). Keys are accepted, never shown again."""

from __future__ import annotations

from typing import Any

from meadhall.auth.sessions import Principal
from meadhall.core.clock import iso
from meadhall.core.errors import AppError, validation_error
from meadhall.core.limits import PUSH_SUBSCRIPTIONS_PER_USER
from meadhall.integrations.outbound import RefusedURL
from meadhall.push import queries
from meadhall.push.delivery import do_send_test as send_test
from meadhall.push.keys import b64url_decode, is_p256_point, load_private_key, public_key_b64
from meadhall.push.queries import SubscriptionRow
from meadhall.runtime import Runtime


def access_push_config(rt: Runtime) -> dict[str, Any]:
    key = rt.settings.VAPID_PRIVATE_KEY
    if not key:
        return {"enabled": False, "public_key": None}
    return {"enabled": True, "public_key": public_key_b64(load_private_key(key))}


async def access_subscriptions(rt: Runtime, principal: Principal) -> dict[str, Any]:
    async with rt.read() as uow:
        rows = await queries.select_subscriptions(uow.conn, principal.user_id)
    return {"subscriptions": [subscription_view(r) for r in rows]}


def _check_enabled(rt: Runtime) -> None:
    if not rt.settings.web_push_enabled:
        raise AppError("push.disabled")


def check_subscription(rt: Runtime, endpoint: str, p256dh: str, auth: str) -> None:
    """Keys a browser really made, and an endpoint the outbound guard would deliver to."""
    try:
        point = b64url_decode(p256dh)
    except ValueError:
        point = b""
    if not is_p256_point(point):
        raise validation_error("keys.p256dh", "must be an uncompressed P-256 point, base64url")
    try:
        secret = b64url_decode(auth)
    except ValueError:
        secret = b""
    if len(secret) != 16:
        raise validation_error("keys.auth", "must be 16 bytes, base64url")
    try:
        rt.outbound.target(endpoint)
    except RefusedURL as exc:
        raise validation_error("endpoint", f"not a push service the server may reach: {exc}") from None


async def do_subscribe(rt: Runtime, principal: Principal, endpoint: str, p256dh: str, auth: str) -> dict[str, Any]:
    """201 with the subscription; an endpoint already known (this browser subscribed before, maybe signed in
    as someone else) moves to the caller with the new keys."""
    _check_enabled(rt)
    check_subscription(rt, endpoint, p256dh, auth)
    async with rt.uow() as uow:
        existing = await queries.select_by_endpoint(uow.conn, endpoint)
        mine = existing is not None and existing["user_id"] == principal.user_id
        if not mine and await queries.count_subscriptions(uow.conn, principal.user_id) >= PUSH_SUBSCRIPTIONS_PER_USER:
            raise AppError("push.limit_reached")
        if existing is not None:
            await queries.update_subscription_owner(uow.conn, existing["id"], principal.user_id,
                                                    principal.session_id, p256dh, auth, uow.now)
            row = SubscriptionRow(**{**existing, "user_id": principal.user_id, "session_id": principal.session_id,
                                     "p256dh": p256dh, "auth": auth, "created_at": uow.now, "failure_count": 0,
                                     "last_delivery_at": None})
        else:
            # The calling session owns it: the database deletes it when that session ends (docs/push.md).
            row = SubscriptionRow(id=uow.next_id(), user_id=principal.user_id, session_id=principal.session_id,
                                  endpoint=endpoint, p256dh=p256dh, auth=auth, created_at=uow.now, failure_count=0,
                                  last_delivery_at=None)
            if not await queries.insert_subscription(uow.conn, row):
                raced = await queries.select_by_endpoint(uow.conn, endpoint)
                if raced is not None:  # the other request won: this one's keys are as new
                    await queries.update_subscription_owner(uow.conn, raced["id"], principal.user_id,
                                                            principal.session_id, p256dh, auth, uow.now)
                    row = SubscriptionRow(**{**row, "id": raced["id"]})
    return {"subscription": subscription_view(row)}


async def do_unsubscribe(rt: Runtime, principal: Principal, endpoint: str) -> None:
    async with rt.uow() as uow:
        if not await queries.delete_user_subscription(uow.conn, principal.user_id, endpoint):
            raise AppError("push_subscription.not_found")


def subscription_view(row: SubscriptionRow) -> dict[str, Any]:
    return {"id": str(row["id"]), "endpoint": row["endpoint"], "created_at": iso(row["created_at"]),
            "failure_count": int(row["failure_count"]), "last_delivery_at": iso(row["last_delivery_at"])}


async def do_send_test(rt: Runtime, principal: Principal) -> dict[str, Any]:
    """A test notification to each of the caller's devices (OpenAPI: sendTestPush)."""
    _check_enabled(rt)
    from_delivery = await send_test(rt, principal.user_id)
    return {"subscriptions": from_delivery}
