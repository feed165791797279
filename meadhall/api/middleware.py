"""Pure ASGI middleware: request id (bound to the log context with the client address), access log,
request metrics, JSON body cap, rate-limit headers, and the last-resort handlers: 503 when a dependency
is down (api/errors.py `outage`), else 500 (no stack trace in the body; the trace is logged with the
request id)."""

from __future__ import annotations

import json
import logging
import re
import time
from random import getrandbits
from typing import Any

import structlog
from fastapi import HTTPException
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from meadhall.api.client import client_ip
from meadhall.api.errors import outage
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
# An X-Request-ID set by the trusted proxy is kept when it is a plain token (visible ASCII, at most 128
# characters): it lands in every log line, so nothing that could break a line or a log query passes.
_SANE_REQUEST_ID = re.compile(r"[\x21-\x7e]{1,128}")


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
    """Content-Type and Content-Length, the two headers the body checks read, and X-Request-ID."""
    found = {}
    for name, value in raw:
        key = name.lower()
        if key in (b"content-type", b"content-length", b"x-request-id"):
            found[key.decode()] = value.decode("latin-1")
    return found


def _request_id(scope: Scope, headers: dict[str, str]) -> str:
    """The proxy's X-Request-ID when TRUST_PROXY is on and it is sane; otherwise a new one (a client
    must not choose the id its requests are logged under)."""
    incoming = headers.get("x-request-id")
    if incoming is not None and _SANE_REQUEST_ID.fullmatch(incoming):
        app = scope.get("app")
        if app is not None and app.state.runtime.settings.TRUST_PROXY:
            return incoming
    # Correlation ids, not secrets: 128 bits of the process's PRNG (reseeded in forked children) cost
    # a fraction of uuid4's os.urandom call on every request.
    return f"{getrandbits(128):032x}"


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
        started = time.perf_counter()
        headers = _body_headers(scope["headers"])
        request_id = _request_id(scope, headers)
        scope.setdefault("state", {})["request_id"] = request_id
        # Every log line written while this request runs (services, drivers) carries both.
        tokens = structlog.contextvars.bind_contextvars(request_id=request_id,
                                                        client_ip=client_ip(HTTPConnection(scope)))
        status_holder: dict[str, Any] = {"status": 500, "sent": False}
        is_upload = headers.get("content-type", "").startswith("multipart/")

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                status_holder["sent"] = True
                raw = list(message.get("headers", []))
                present = {k.lower() for k, _ in raw}
                raw.append((b"x-request-id", request_id.encode()))
                # Headers that dependencies ask for (session rotation), on success and error alike. Their
                # Cache-Control replaces the route's: an answer carrying a new token must not be stored.
                for name, value in scope.get("state", {}).get(EXTRA_HEADERS_KEY, []):
                    key = name.lower().encode()
                    if key == b"cache-control":
                        raw = [(k, v) for k, v in raw if k.lower() != key]
                    raw.append((key, value.encode()))
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
        except Exception as exc:
            unavailable = outage(exc)
            if unavailable is not None:
                log.warning("dependency unavailable", route=_route_template(scope), error=repr(exc))
            else:
                log.exception("unhandled error", request_id=request_id, route=_route_template(scope))
            if not status_holder["sent"]:
                err = unavailable or AppError("internal.error", request_id=request_id)
                await self._send_error(send_wrapper, err)
        finally:
            elapsed = time.perf_counter() - started
            route = _route_template(scope)
            access = _access_log()
            if access is not None:
                access.info(
                    "request",
                    request_id=request_id,
                    method=scope.get("method"),
                    route=route,
                    status=status_holder["status"],
                    latency_ms=round(elapsed * 1000, 2),
                )
            app = scope.get("app")
            metrics = app.state.runtime.metrics if app is not None else None
            if metrics is not None:
                metrics.observe_request(scope["method"], route, status_holder["status"], elapsed)
            structlog.contextvars.reset_contextvars(**tokens)

    @staticmethod
    async def _send_error(send: Send, err: AppError) -> None:
        body = _error_bytes(err)
        await send(
            {
                "type": "http.response.start",
                "status": err.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *((k.lower().encode(), v.encode()) for k, v in err.headers.items())],
            }
        )
        await send({"type": "http.response.body", "body": body})
