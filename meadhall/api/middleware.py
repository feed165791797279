"""Pure ASGI middleware run by every HTTP request, in five named steps (see `RequestMiddleware`):
request id bound to the log context with the client address; the 1 MiB body cap and 422 for a NUL in the
path or query; the response headers every answer carries (request id, headers asked for by dependencies,
rate-limit headers, `no-store` on private answers); the last-resort answers (503 when a dependency is down,
api/errors.py `outage`, else 500 with no stack trace in the body); the access log and request metrics."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Mapping
from contextvars import Token
from random import getrandbits
from typing import Any
from urllib.parse import parse_qsl

import structlog
from fastapi import HTTPException
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from meadhall.api.client import client_ip
from meadhall.api.errors import outage
from meadhall.api.limits import STATE_KEY
from meadhall.core.errors import AppError, validation_error

try:
    from fastapi.routing import iter_route_contexts
except ImportError:  # FastAPI before nested included routers: a route's `path` is already complete
    # A module-level fallback: mypy sees the function's type and cannot type the None alternative.
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
# The session cookie (docs/architecture.md, "Sessions"), as it appears in a Cookie or Set-Cookie header.
# Answers to a request that carried one, or a Bearer token, are never stored (docs/files.md, "Serving").
_SESSION_COOKIE = "__Host-session="
_NO_STORE = (b"cache-control", b"no-store")


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
        template = str(found[0].path_format)  # `found` holds only contexts with a template
        cache[id(route)] = (route, template)
        return template
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
    """Content-Type and Content-Length, the two headers the body checks read, X-Request-ID, and the two
    that may carry a session (Authorization, Cookie; several Cookie headers are joined)."""
    found: dict[str, str] = {}
    for name, value in raw:
        key = name.lower()
        if key in (b"content-type", b"content-length", b"x-request-id", b"authorization"):
            found[key.decode()] = value.decode("latin-1")
        elif key == b"cookie":
            found["cookie"] = found.get("cookie", "") + "; " + value.decode("latin-1")
    return found


def _carries_session(headers: dict[str, str]) -> bool:
    """Whether the request came with a session, valid or not: a Bearer token (any Authorization header) or
    the session cookie."""
    return "authorization" in headers or _SESSION_COOKIE in headers.get("cookie", "")


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


class _Exchange:
    """One request as the middleware sees it: its id, whether the answer has started and with which
    status, and how much body came in. Its bound methods wrap `send` and `receive` (steps 2 and 3); a
    plain object with slots costs no more than the closures it replaces."""

    __slots__ = ("scope", "request_id", "private", "status", "started", "received", "upload", "_send",
                 "_receive")

    def __init__(self, scope: Scope, receive: Receive, send: Send, request_id: str, upload: bool,
                 private: bool = False) -> None:
        self.scope = scope
        self.request_id = request_id
        self.private = private
        self.status = 500  # what is logged when the app fails before answering
        self.started = False
        self.received = 0
        self.upload = upload
        self._send = send
        self._receive = receive

    async def send(self, message: Message) -> None:
        """Step 3: the response headers every answer carries, added to the app's own."""
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.started = True
            message["headers"] = _response_headers(self.scope, self.request_id, message.get("headers", []),
                                                   self.private)
        await self._send(message)

    async def receive(self) -> Message:
        """Step 2: the 1 MiB cap on bodies that are not streamed by an upload route, counted as the
        body arrives (a chunked body declares no length)."""
        message = await self._receive()
        if message["type"] == "http.request" and not self.scope["state"].get(UPLOAD_BODY_KEY):
            self.received += len(message.get("body", b""))
            if self.received > MAX_JSON_BODY:
                raise _BodyTooLarge()
        return message

    async def answer_error(self, err: AppError) -> None:
        """An error envelope, unless the app has already begun its own answer (then nothing can be
        changed: the client sees the connection end)."""
        if self.started:
            return
        body = _error_bytes(err)
        await self.send(
            {
                "type": "http.response.start",
                "status": err.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *((k.lower().encode(), v.encode()) for k, v in err.headers.items())],
            }
        )
        await self.send({"type": "http.response.body", "body": body})


def _bind_request(scope: Scope, headers: dict[str, str]) -> tuple[str, Mapping[str, Token[Any]]]:
    """Step 1: the request id, kept in the request state and bound with the client address to the log
    context, so every log line written while this request runs (services, drivers) carries both.
    Returns the id and the context tokens to reset at the end."""
    request_id = _request_id(scope, headers)
    scope.setdefault("state", {})["request_id"] = request_id
    tokens = structlog.contextvars.bind_contextvars(request_id=request_id,
                                                    client_ip=client_ip(HTTPConnection(scope)))
    return request_id, tokens


def _nul_refusal(scope: Scope) -> AppError | None:
    """Step 2, before any route: a NUL in the path or in a query parameter is refused with 422
    `validation.failed` naming the parameter (docs/reference/errors.md: no control characters in text). No
    text field may hold one, and PostgreSQL cannot even compare a text with one: a NUL that reached a
    query there would fail with 500 (an invite code, a name looked up, a search)."""
    if "\x00" in scope.get("path", ""):
        return validation_error("path", "must not contain NUL characters")
    query = scope.get("query_string", b"")
    if b"%00" in query or b"\x00" in query:
        for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
            if "\x00" in name or "\x00" in value:
                return validation_error(name.replace("\x00", "") or "query", "must not contain NUL characters")
    return None


def _refuse_declared_oversize(headers: dict[str, str], upload: bool) -> None:
    """Step 2, before any byte is read: a declared Content-Length above the cap is refused at once."""
    try:
        declared = int(headers.get("content-length", "0") or 0)
    except ValueError:
        declared = 0
    if declared > MAX_JSON_BODY and not upload:
        raise _BodyTooLarge()


def _response_headers(scope: Scope, request_id: str, headers: Any, private: bool = False
                      ) -> list[tuple[bytes, bytes]]:
    """X-Request-ID; the headers dependencies asked for (session rotation), on success and error alike,
    whose Cache-Control replaces the route's (an answer carrying a new token must not be stored); the
    rate-limit headers of the bucket taken, unless the route set its own; `Cache-Control: no-store` on an
    answer to a request that carried a session and on one that hands out a token, unless the route chose
    its own cache rule: file content keeps its long private one (docs/files.md, "Serving"), and the web
    client's pages and assets are the same for everyone."""
    raw = list(headers)
    present = {k.lower() for k, _ in raw}
    raw.append((b"x-request-id", request_id.encode()))
    state = scope.get("state", {})
    for name, value in state.get(EXTRA_HEADERS_KEY, []):
        key = name.lower().encode()
        if key == b"cache-control":
            raw = [(k, v) for k, v in raw if k.lower() != key]
        present.add(key)
        raw.append((key, value.encode()))
    decision = state.get(STATE_KEY)
    if decision is not None and b"x-ratelimit-bucket" not in present:
        raw.extend((k.lower().encode(), v.encode()) for k, v in decision.headers().items())
    if b"cache-control" not in present and (private or _carries_token(raw)):
        raw.append(_NO_STORE)
    return raw


def _carries_token(raw: list[tuple[bytes, bytes]]) -> bool:
    """Whether the answer hands out a session token (a sign-in's cookie, a rotated token)."""
    return any(k == b"x-session-token" or (k == b"set-cookie" and v.startswith(_SESSION_COOKIE.encode()))
               for k, v in raw)


async def _last_resort(exchange: _Exchange, exc: Exception) -> None:
    """Step 4, for what no handler answered: 503 when a dependency is down (api/errors.py `outage`),
    else 500 without a stack trace in the body (the trace is logged with the request id)."""
    unavailable = outage(exc)
    if unavailable is not None:
        log.warning("dependency unavailable", route=_route_template(exchange.scope), error=repr(exc))
    else:
        log.exception("unhandled error", request_id=exchange.request_id, route=_route_template(exchange.scope))
    await exchange.answer_error(unavailable or AppError("internal.error", request_id=exchange.request_id))


def _record(exchange: _Exchange, elapsed: float) -> None:
    """Step 5: the access log line (when its level is on) and the request metrics, by route template."""
    scope = exchange.scope
    route = _route_template(scope)
    access = _access_log()
    if access is not None:
        access.info(
            "request",
            request_id=exchange.request_id,
            method=scope.get("method"),
            route=route,
            status=exchange.status,
            latency_ms=round(elapsed * 1000, 2),
        )
    app = scope.get("app")
    metrics = app.state.runtime.metrics if app is not None else None
    if metrics is not None:
        metrics.observe_request(scope["method"], route, exchange.status, elapsed)


class RequestMiddleware:
    """Every HTTP request passes five steps here, in this order: (1) request id and log context,
    (2) the body cap and the NUL refusal, (3) the common response headers, (4) the last-resort error answers, (5) the access
    log and metrics. Each is a named function above; this method only sequences them. One pure ASGI
    middleware instead of five: each Starlette middleware layer costs a call chain and a scope pass per
    request, and this runs on every request (docs/benchmarks.md, "Per-request overhead")."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = _body_headers(scope["headers"])
        request_id, tokens = _bind_request(scope, headers)
        upload = headers.get("content-type", "").startswith("multipart/")
        exchange = _Exchange(scope, receive, send, request_id, upload, _carries_session(headers))
        try:
            _refuse_declared_oversize(headers, upload)
            refused = _nul_refusal(scope)
            if refused is not None:
                await exchange.answer_error(refused)
            else:
                await self.app(scope, exchange.receive, exchange.send)
        except _BodyTooLarge:
            await exchange.answer_error(AppError("request.too_large"))
        except Exception as exc:
            await _last_resort(exchange, exc)
        finally:
            _record(exchange, time.perf_counter() - started)
            structlog.contextvars.reset_contextvars(**tokens)
