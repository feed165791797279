"""Link previews (OpenAPI: getLinkPreview; docs/outbound.md): answered from the database cache while it lives,
else fetched through the outbound guard, which costs one token of the caller's `link_previews` bucket.

Statuses: `ok` (a card), `empty` (not HTML, or no usable metadata), `blocked` (a scheme, credentials or an
address the guard refuses, on any redirect hop), `error` (network, HTTP error status, timeout)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from yarl import URL

from meadhall.auth.sessions import Principal
from meadhall.core import limits
from meadhall.core.clock import iso
from meadhall.core.errors import AppError, rate_limited, validation_error
from meadhall.core.ratelimit import Decision
from meadhall.integrations.outbound import MalformedURL, OutboundBlocked, OutboundFailed, RefusedURL
from meadhall.previews import queries
from meadhall.previews.card import parse_card
from meadhall.previews.queries import PreviewRow
from meadhall.runtime import Runtime

LIVES = {
    "ok": limits.LINK_PREVIEW_OK_SECONDS,
    "empty": limits.LINK_PREVIEW_EMPTY_SECONDS,
    "blocked": limits.LINK_PREVIEW_EMPTY_SECONDS,
    "error": limits.LINK_PREVIEW_ERROR_SECONDS,
}


async def access_link_preview(rt: Runtime, principal: Principal, raw_url: str
                              ) -> tuple[dict[str, Any], Decision | None]:
    """(the LinkPreview, the `link_previews` decision when a fetch took a token: the route reports that
    bucket, the most specific one applied, in the rate-limit headers; None for a free answer)."""
    if not rt.settings.UNFURL_ENABLED:
        raise AppError("link_preview.disabled")
    url, refused = _normalise(rt, raw_url)
    key = hashlib.sha256(url.encode()).hexdigest()
    async with rt.read() as uow:
        cached = await queries.select_preview(uow.conn, key)
        now = uow.now
    if cached is not None and _utc(cached["expires_at"]) > now:
        return preview_view(cached), None
    decision = None
    if refused:
        status, card = "blocked", None
    else:
        decision = await rt.limiter.hit("link_previews", f"u{principal.user_id}", rt.now_ts())
        if not decision.allowed:
            raise rate_limited("link_previews", decision.retry_after, decision.headers())
        status, card = await fetch_card(rt, url)
    async with rt.uow() as uow:
        row = PreviewRow(url_hash=key, url=url, status=status, card=card, fetched_at=uow.now,
                         expires_at=uow.now + timedelta(seconds=LIVES[status]))
        await queries.upsert_preview(uow.conn, row)
    return preview_view(row), decision


def _normalise(rt: Runtime, raw: str) -> tuple[str, bool]:
    """(the normalised URL, whether it is refused before any fetch). An absolute URL of another scheme, with
    credentials or naming a refused address is `blocked`; what is not an absolute URL at all, or whose host
    cannot be read (`[zz::1]`, a number naming no address, a space), answers 422."""
    try:
        parsed = URL(raw.strip())
    except (ValueError, TypeError, UnicodeError):
        raise validation_error("url", "not a URL") from None
    if not parsed.scheme or (parsed.scheme in ("http", "https") and not parsed.raw_host):
        raise validation_error("url", "must be an absolute http or https URL")
    try:
        return str(rt.outbound.target(parsed)), False
    except MalformedURL as exc:
        raise validation_error("url", f"not a URL: {exc}") from None
    except RefusedURL:
        return str(parsed.with_fragment(None)), True


async def fetch_card(rt: Runtime, url: str) -> tuple[str, dict[str, Any] | None]:
    """One fetch through the guard: (status, card)."""
    try:
        answer = await rt.outbound.request(
            "GET", url, headers={"Accept": "text/html"}, redirects=limits.LINK_PREVIEW_REDIRECTS,
            max_bytes=limits.LINK_PREVIEW_MAX_BYTES, seconds=limits.LINK_PREVIEW_SECONDS,
            read_body=lambda content_type: content_type == "text/html")
    except OutboundBlocked:
        return "blocked", None
    except OutboundFailed:
        return "error", None
    if answer.status >= 400:
        return "error", None
    if answer.content_type != "text/html" or answer.status != 200:
        return "empty", None
    card = parse_card(answer.body, answer.charset, answer.url, rt.outbound.allowed)
    if card is None:
        return "empty", None
    if card["image_url"] is not None and not await rt.outbound.allows(card["image_url"]):
        card["image_url"] = None  # e.g. a name resolving to a private address: checked, never fetched
    return "ok", card


def preview_view(row: PreviewRow) -> dict[str, Any]:
    return {"url": row["url"], "status": row["status"], "card": row["card"] if row["status"] == "ok" else None,
            "fetched_at": iso(row["fetched_at"]), "expires_at": iso(row["expires_at"])}


def _utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes, UTC by construction."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
