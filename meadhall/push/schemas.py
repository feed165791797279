"""Request and response models of the Web Push routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from meadhall.core.text import check_single_line

# A URL never holds a control character; refused with 422 before it reaches a query (a NUL is an error on
# PostgreSQL; docs/reference/errors.md).
Endpoint = Annotated[str, AfterValidator(check_single_line)]


class PushConfig(BaseModel):
    enabled: bool
    public_key: str | None = Field(description=(
        "the VAPID public key, base64url of the uncompressed P-256 point: the `applicationServerKey` of "
        "`pushManager.subscribe`; null when Web Push is off"))


class SubscriptionKeys(BaseModel):
    p256dh: str = Field(min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+={0,2}$",
                        description="base64url of the browser's P-256 public key (an uncompressed point)")
    auth: str = Field(min_length=1, max_length=64, pattern="^[A-Za-z0-9_-]+={0,2}$",
                      description="base64url of the 16-byte authentication secret")


class SubscriptionCreate(BaseModel):
    endpoint: Endpoint = Field(min_length=9, max_length=2048, pattern="^https://",
                          description="the push service URL of `PushSubscription.endpoint`")
    keys: SubscriptionKeys


class PushSubscription(BaseModel):
    id: str
    endpoint: str
    created_at: str
    failure_count: int = Field(description="consecutive failed deliveries (5 remove the subscription)")
    last_delivery_at: str | None


class SubscriptionResponse(BaseModel):
    subscription: PushSubscription


class SubscriptionsResponse(BaseModel):
    subscriptions: list[PushSubscription]


class TestPushResponse(BaseModel):
    subscriptions: int = Field(description="how many subscriptions the test notification was queued for")
