"""Pure ASGI middleware: request id, access log, JSON body cap, rate-limit headers, and the last-resort
500 handler (no stack trace in the body; the trace is logged with the request id)."""

from __future__ import annotations

import json
import logging
import time
from random import getrandbits
from typing import Any

import structlog
from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from meadhall.api.limits import STATE_KEY
from meadhall.core.errors import AppError

try:
    from fastapi.routing import iter_route_contexts
except ImportError:  # FastAPI before nested included routers: a route's `path` is already complete
    iter_route_contexts = None  # type: ignore[assignment]

MAX_JSON_BODY = 1024 * 1024
EXTRA_HEADERS_KEY = "response_headers"
# Set in the request state by an upload route before it streams the body: it enforces its own limit
# (files/upload.py). A multipart body sent to any other route stays under the 1 MiB cap.
UPLOAD_BODY_KEY = "upload_body"
log = structlog.get_logger("meadhall.http")


class _BodyTooLarge(HTTPException):
    """An HTTPException so that FastAPI's body parsing passes it through unchanged."""

    def __init__(self) -> None:
        super().__init__(status_code=413, detail="request body too large")


def _error_bytes(err: AppError) -> bytes:
    return json.dumps(err.body()).encode()


def _included_template(scope: Scope, route: Any) -> str | None:
    """The full template of a route reached through included routers.

    FastAPI keeps included routers nested, so the matched route's own `path` lacks every prefix given
    to `include_router`; the route contexts carry the full template. Unique results are cached per app.
    """
    app = scope.get("app")
    if iter_route_contexts is None or app is None:
        return None
    cache: dict[int, tuple[Any, str]] = app.__dict__.setdefault("_meadhall_route_templates", {})
    hit = cache.get(id(route))
    if hit is not None and hit[0] is route:
        return hit[1]
    found = [rc for rc in iter_route_contexts(app.routes) if rc.original_route is route and rc.path_format]
    if len(found) == 1:
        cache[id(route)] = (route, found[0].path_format)
        return found[0].path_format
    path = scope.get("path", "")
    # The same router included twice: the context whose pattern matches this request.
    for rc in found:
        regex = getattr(rc, "path_regex", None)
        if regex is not None and regex.match(path):
            return rc.path_format
    return None


def _route_template(scope: Scope) -> str:
    """The matched path template (never the concrete path: webhook paths carry tokens)."""
    route = scope.get("route")
    template = getattr(route, "path", None)
    if not template:
        return "<unmatched>"
    full = _included_template(scope, route)
    if full:
        return full
    if scope.get("path", "").startswith("/api/v1") and not template.startswith("/api/v1"):
        template = "/api/v1" + template
    return template


def _body_headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Content-Type and Content-Length, the two headers the body checks read."""
    found = {}
    for name, value in raw:
        key = name.lower()
        if key in (b"content-type", b"content-length"):
            found[key.decode()] = value.decode("latin-1")
    return found


_ACCESS_LOG: list[Any] = []  # [(structlog configuration key, bound logger)]


def _access_log() -> Any:
    """The request logger, or None when its level is filtered out (LOG_LEVEL above info).

    `log` is a lazy proxy that binds a new logger on every call (about 10 us here); the bound one is
    kept while structlog's configuration stays the same (tests and `configure_logging` change it)."""
    config = structlog.get_config()
    key = (config["wrapper_class"], config["logger_factory"], id(config["processors"]), config["context_class"])
    if not _ACCESS_LOG or _ACCESS_LOG[0][0] != key:
        _ACCESS_LOG[:] = [(key, log.bind())]
    bound = _ACCESS_LOG[0][1]
    enabled = getattr(bound, "is_enabled_for", None)
    return bound if enabled is None or enabled(logging.INFO) else None


class RequestMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Correlation ids, not secrets: 128 bits of the process's PRNG (reseeded in forked children) cost
        # a fraction of uuid4's os.urandom call on every request.
        request_id = f"{getrandbits(128):032x}"
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status_holder: dict[str, Any] = {"status": 500, "sent": False}
        headers = _body_headers(scope["headers"])
        is_upload = headers.get("content-type", "").startswith("multipart/")

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                status_holder["sent"] = True
                raw = list(message.get("headers", []))
                present = {k.lower() for k, _ in raw}
                raw.append((b"x-request-id", request_id.encode()))
                # Headers that dependencies ask for (session rotation), on success and error alike.
                for name, value in scope.get("state", {}).get(EXTRA_HEADERS_KEY, []):
                    raw.append((name.lower().encode(), value.encode()))
                decision = scope.get("state", {}).get(STATE_KEY)
                if decision is not None and b"x-ratelimit-bucket" not in present:
                    raw.extend((k.lower().encode(), v.encode()) for k, v in decision.headers().items())
                message["headers"] = raw
            await send(message)

        received = 0

        async def receive_wrapper() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request" and not scope["state"].get(UPLOAD_BODY_KEY):
                received += len(message.get("body", b""))
                if received > MAX_JSON_BODY:
                    raise _BodyTooLarge()
            return message

        try:
            declared = int(headers.get("content-length", "0") or 0)
        except ValueError:
            declared = 0
        try:
            if declared > MAX_JSON_BODY and not is_upload:
                raise _BodyTooLarge()
            await self.app(scope, receive_wrapper, send_wrapper)
        except _BodyTooLarge:
            if not status_holder["sent"]:
                await self._send_error(send_wrapper, AppError("request.too_large"))
        except Exception:
            log.exception("unhandled error", request_id=request_id, route=_route_template(scope))
            if not status_holder["sent"]:
                err = AppError("internal.error", request_id=request_id)
                await self._send_error(send_wrapper, err)
        finally:
            access = _access_log()
            if access is not None:
                access.info(
                    "request",
                    request_id=request_id,
                    method=scope.get("method"),
                    route=_route_template(scope),
                    status=status_holder["status"],
                    latency_ms=round((time.perf_counter() - started) * 1000, 2),
                )

    @staticmethod
    async def _send_error(send: Send, err: AppError) -> None:
        body = _error_bytes(err)
        await send(
            {
                "type": "http.response.start",
                "status": err.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})
