"""Web Push routes (docs/push.md): parse, one service call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors, rules
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.push import schemas as s
from meadhall.push import service

router = APIRouter(tags=["web push"])

_KEYS = rules({
    "keys.p256dh": "decodes to an uncompressed point on P-256 (65 bytes, a real point)",
    "keys.auth": "decodes to exactly 16 bytes",
    "endpoint": "a URL the outbound guard may reach (not a private, loopback or otherwise refused address)",
})


@router.get("/push/config", response_model=s.PushConfig)
async def get_push_config(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    """The VAPID public key a browser subscribes with, or `enabled: false` when Web Push is off."""
    del principal
    return service.access_push_config(rt)


@router.get("/push/subscriptions", response_model=s.SubscriptionsResponse)
async def list_push_subscriptions(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await service.access_subscriptions(rt, principal)


@router.post("/push/subscriptions", status_code=201, response_model=s.SubscriptionResponse,
             dependencies=[limited("push.subscriptions")], openapi_extra=_KEYS,
             responses=errors("push.disabled", "push.limit_reached"))
async def create_push_subscription(rt: RuntimeDep, body: s.SubscriptionCreate, principal: PrincipalDep) -> dict:
    """Subscribe this device (at most 10 per user); an endpoint already known moves to the caller."""
    return await service.do_subscribe(rt, principal, body.endpoint, body.keys.p256dh, body.keys.auth)


@router.delete("/push/subscriptions", status_code=204, dependencies=[limited("push.subscriptions")],
               responses=errors("push_subscription.not_found"))
async def delete_push_subscription(rt: RuntimeDep, principal: PrincipalDep,
                                   endpoint: Annotated[s.Endpoint, Query(min_length=1, max_length=2048)]) -> Response:
    await service.do_unsubscribe(rt, principal, endpoint)
    return Response(status_code=204)


@router.post("/push/test", status_code=202, response_model=s.TestPushResponse,
             dependencies=[limited("push.subscriptions")], responses=errors("push.disabled"))
async def send_test_push(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    """Queue a test notification (`type: "test"`) to each of the caller's subscriptions, even while this
    client is open; `subscriptions` says how many it went to (0: this account has none)."""
    return await service.do_send_test(rt, principal)
