"""FastAPI dependencies: the caller's identity (a bearer token or the session cookie, see
docs/architecture.md), the `global` rate-limit bucket, and the client description used by sessions and
security events."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyCookie, HTTPBearer

from meadhall.api.client import client_ip, client_key
from meadhall.api.deps import runtime_of
from meadhall.api.limits import take
from meadhall.api.middleware import EXTRA_HEADERS_KEY
from meadhall.auth.cookies import COOKIE_NAME, session_cookie
from meadhall.auth.security import Client
from meadhall.auth.sessions import UNSAFE_METHODS, Principal, authenticate
from meadhall.core.errors import AppError

# Declared so the OpenAPI document carries both schemes; the token is read in `_carrier`.
cookie_scheme = APIKeyCookie(name=COOKIE_NAME, auto_error=False, scheme_name="cookieAuth")
bearer_scheme = HTTPBearer(auto_error=False, scheme_name="bearerAuth")

_UNSET = object()


def client_of(request: Request) -> Client:
    return Client(ip=client_ip(request), user_agent=request.headers.get("user-agent"))


def _carrier(request: Request) -> tuple[str | None, bool]:
    """(token, via_cookie). An Authorization header wins over the cookie, even when it is invalid."""
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        return (token.strip() or "", False) if scheme.lower() == "bearer" else ("", False)
    return request.cookies.get(COOKIE_NAME), True


async def optional_principal(request: Request) -> Principal | None:
    """The signed-in caller or None (also None for an unusable token: public routes stay public).
    A banned account's session is deleted and answered 403 `user.banned` on any route."""
    state = request.scope.setdefault("state", {})
    cached = state.get("principal", _UNSET)
    if cached is not _UNSET:
        return cached
    token, via_cookie = _carrier(request)
    principal: Principal | None = None
    if token:
        rt = runtime_of(request)
        try:
            result = await authenticate(rt, token, via_cookie=via_cookie, client=client_of(request))
        except AppError as err:
            if err.code != "auth.unauthorized":
                raise
        else:
            principal = result.principal
            if result.rotated_token:
                extra = state.setdefault(EXTRA_HEADERS_KEY, [])
                extra.append(("X-Session-Token", result.rotated_token))
                extra.append(("Cache-Control", "no-store"))  # answers carrying a token are never cached
                if via_cookie:
                    extra.append(("Set-Cookie", session_cookie(rt.settings, result.rotated_token)))
    state["principal"] = principal
    return principal


async def require_session(
    request: Request,
    _cookie: Annotated[str | None, Security(cookie_scheme)] = None,
    _bearer: Annotated[object | None, Security(bearer_scheme)] = None,
) -> Principal:
    principal = await optional_principal(request)
    if principal is None:
        raise AppError("auth.unauthorized")
    if principal.via_cookie and request.method in UNSAFE_METHODS:
        origin = request.headers.get("origin")
        if origin and origin.rstrip("/") != runtime_of(request).settings.public_origin:
            raise AppError("auth.origin_mismatch")
    return principal


async def global_limit(request: Request) -> None:
    """The `global` bucket on every /api/v1 route, keyed by user, or by address without a session."""
    principal = await optional_principal(request)
    key = f"u{principal.user_id}" if principal else client_key(request)
    await take(request, "global", key)


PrincipalDep = Annotated[Principal, Depends(require_session)]


async def plain_session(request: Request) -> Principal:
    """What a signed-in /api/v1 route's dependencies do, in their order, for a plain route
    (api/plain.py): the `global` bucket, then the session (401 / origin check)."""
    await global_limit(request)
    return await require_session(request)


async def client_info(request: Request) -> Client:
    """`client_of` as an async dependency (a sync one would run on a worker thread)."""
    return client_of(request)


ClientInfo = Annotated[Client, Depends(client_info)]


def limited(bucket: str) -> Any:
    """Route dependency taking one token of `bucket`, keyed per user or per address as the bucket
    says (docs/reference/limits.md). User-keyed buckets authenticate first, so 401 comes before 429
    (docs/reference/errors.md)."""

    async def dependency(request: Request) -> None:
        kind = runtime_of(request).limiter.bucket(bucket).key
        if kind == "ip":
            key = client_key(request)
        else:
            principal = await require_session(request)
            key = f"u{principal.user_id}"
        await take(request, bucket, key)

    dependency.__name__ = f"limit_{bucket.replace('.', '_')}"
    return Depends(dependency)
